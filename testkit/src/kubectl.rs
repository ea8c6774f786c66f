//! The real `kubectl` against a simulator: whether it is installed, and one run of it with its
//! own kubeconfig and discovery cache.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

/// True when `kubectl` is on the PATH and runs. Tests that need it print a notice and return
/// when it is not.
pub fn installed() -> bool {
    Command::new("kubectl")
        .args(["version", "--client"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// What one kubectl run printed, and whether it succeeded.
#[derive(Clone, Debug)]
pub struct Output {
    /// The exit status was success.
    pub success: bool,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Output {
    /// Standard output followed by standard error.
    pub fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// Runs `kubectl args` (with a 30 s request timeout) against `kubeconfig`, keeping its
/// discovery cache in `cache` (a fresh directory per test, so no other run's discovery is seen).
pub fn run<S: AsRef<OsStr>>(kubeconfig: &Path, cache: &Path, args: &[S]) -> Output {
    let out = Command::new("kubectl")
        // Before the arguments: after a `--` it would become part of the command kubectl runs.
        .arg("--request-timeout=30s")
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", cache)
        .output()
        .expect("run kubectl");
    Output {
        success: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// [`run`] off the async runtime's threads (on tokio's blocking pool), for async tests.
pub async fn run_async(kubeconfig: &Path, cache: &Path, args: &[&str]) -> Output {
    let (kubeconfig, cache) = (kubeconfig.to_path_buf(), cache.to_path_buf());
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    tokio::task::spawn_blocking(move || run(&kubeconfig, &cache, &args))
        .await
        .expect("the kubectl run finished")
}
