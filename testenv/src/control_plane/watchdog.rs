//! The watchdog: a small shell process that outlives the test process to clean up after it. It
//! reads the pid of every server on its standard input, a pipe only the test process holds; when
//! the test process ends without stopping its control plane (a static that is never dropped, a
//! panic that aborts, SIGKILL) the kernel closes the pipe, and the watchdog kills the servers and
//! removes the data directory. A control plane that stops normally dismisses it first. It works
//! wherever `/bin/sh` does, and backs up the parent-death signal of Linux (which kills the
//! servers but leaves their files).

use std::io::{self, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

/// The watchdog's program: `$1` is the data directory. Terminal signals are ignored (it must
/// outlive the test to do its work); a `done` line dismisses it.
const SCRIPT: &str = r#"trap '' HUP INT QUIT TERM PIPE
pids=
while read -r line; do
  [ "$line" = done ] && exit 0
  pids="$pids $line"
done
[ -n "$pids" ] && kill -9 $pids 2>/dev/null
tries=0
while [ -e "$1" ] && [ "$tries" -lt 100 ]; do
  rm -rf "$1" 2>/dev/null
  [ -e "$1" ] && sleep 0.1
  tries=$((tries + 1))
done
"#;

/// A running watchdog for one data directory.
#[derive(Debug)]
pub(crate) struct Watchdog {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Watchdog {
    /// Starts a watchdog that removes `dir` if this process ends without dismissing it.
    pub(crate) fn start(dir: &Path) -> io::Result<Self> {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(SCRIPT)
            .arg("kube-rt-testenv-watchdog")
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own process group: a terminal's Ctrl-C to the test must not reach it.
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn()?;
        let stdin = child.stdin.take();
        Ok(Self { child, stdin })
    }

    /// Tells the watchdog to kill `pid` if this process ends without dismissing it.
    pub(crate) fn guard(&mut self, pid: u32) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::other("the watchdog was dismissed"))?;
        writeln!(stdin, "{pid}")?;
        stdin.flush()
    }
}

impl Drop for Watchdog {
    /// Dismisses the watchdog (the control plane stopped its servers and removes its files
    /// itself) and reaps it.
    fn drop(&mut self) {
        if let Some(mut stdin) = self.stdin.take() {
            let _ = writeln!(stdin, "done");
        }
        let _ = self.child.wait();
    }
}
