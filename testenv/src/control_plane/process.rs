//! The control plane's server processes: each started with its output in a log file, in a
//! process group of its own (a terminal's Ctrl-C reaches the test, not the servers), killed and
//! reaped when the control plane stops — and, on Linux, killed by the kernel when the test
//! process ends in any way: a parent-death signal set between fork and exec, from a thread that
//! lives as long as the process (the signal follows the thread that forked, and a test's
//! threads end with the test).

use std::fs::File;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;

use parking_lot::Mutex;

/// A server process of the control plane. Dropping it kills and reaps it.
#[derive(Debug)]
pub(crate) struct Server {
    name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Server {
    /// Starts `program` with `args`, its standard output and error appended to `log`.
    pub(crate) fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        log: PathBuf,
    ) -> io::Result<Self> {
        let output = File::options().create(true).append(true).open(&log)?;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        #[cfg(target_os = "linux")]
        die_with_this_process(&mut command);
        let child = spawn_from_lasting_thread(command)?;
        Ok(Self { name, child, log })
    }

    /// The process's name: its binary's.
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How the process ended, if it has.
    pub(crate) fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last `lines` lines of the process's log, for an error message.
    pub(crate) fn log_tail(&self, lines: usize) -> String {
        let Ok(file) = File::open(&self.log) else {
            return format!("(no log at {})", self.log.display());
        };
        let all: Vec<String> = io::BufReader::new(file)
            .lines()
            .map_while(Result::ok)
            .collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Whether the log says the server could not listen on its port (taken since it was found
    /// free).
    pub(crate) fn port_was_taken(&self) -> bool {
        self.log_tail(50).contains("address already in use")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGKILL: everything the server holds is thrown away with the data directory, and
        // kube-apiserver's graceful shutdown takes seconds.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A command and where to send the child it started.
type Request = (Command, mpsc::Sender<io::Result<Child>>);

/// The thread that starts every server process. It never ends, so a parent-death signal set
/// by its children fires only when the process ends.
static SPAWNER: Mutex<Option<mpsc::Sender<Request>>> = parking_lot::const_mutex(None);

/// Starts `command` from the spawner thread (started on first use).
fn spawn_from_lasting_thread(command: Command) -> io::Result<Child> {
    let (reply, answer) = mpsc::channel();
    {
        let mut spawner = SPAWNER.lock();
        let requests = match spawner.as_ref() {
            Some(requests) => requests.clone(),
            None => {
                let (requests, incoming) = mpsc::channel::<Request>();
                std::thread::Builder::new()
                    .name("kube-rt-testenv control plane spawner".to_owned())
                    .spawn(move || {
                        for (mut command, reply) in incoming {
                            let _ = reply.send(command.spawn());
                        }
                    })?;
                spawner.insert(requests).clone()
            }
        };
        requests
            .send((command, reply))
            .map_err(|_| io::Error::other("the control plane's spawner thread is gone"))?;
    }
    answer
        .recv()
        .map_err(|_| io::Error::other("the control plane's spawner thread did not answer"))?
}

/// Makes the kernel kill the child when this process ends (`PR_SET_PDEATHSIG`), and refuses to
/// start it if the process already ended between the fork and the signal being set.
#[cfg(target_os = "linux")]
fn die_with_this_process(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    let parent = libc::pid_t::try_from(std::process::id()).unwrap_or(libc::pid_t::MAX);
    // SAFETY: the closure runs in the child between fork and exec; it calls only prctl and
    // getppid, which are async-signal-safe, and allocates nothing (an OS error is a code).
    unsafe {
        command.pre_exec(move || {
            let signal = libc::c_ulong::try_from(libc::SIGKILL).unwrap_or(9);
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}
