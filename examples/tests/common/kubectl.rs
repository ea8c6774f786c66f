//! Running `kubectl` and the standalone `apiserver-sim` binary from tests.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

/// How long a kubectl test waits for any one condition.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Runs kubectl against `kubeconfig` with its discovery cache in `cache`: its stdout, or its
/// stderr when it fails.
pub async fn kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("kubectl")
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .env("KUBECACHEDIR", cache)
        .output()
        .await
        .map_err(|e| e.to_string())?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// Retries `kubectl args` until `accept` takes its output, failing after [`DEADLINE`].
pub async fn kubectl_until(
    kubeconfig: &Path,
    cache: &Path,
    args: &[&str],
    accept: impl Fn(&str) -> bool,
) -> String {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let last = kubectl(kubeconfig, cache, args).await;
        if let Ok(out) = &last
            && accept(out)
        {
            return out.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "kubectl {args:?} never gave the expected output; last: {last:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The `apiserver-sim` package's binary. A binary of another package has no `CARGO_BIN_EXE_`
/// variable, but `cargo test --workspace` builds it next to this test's `deps/` directory (the
/// simulator's own tests need it); when only this package's tests were built, cargo builds it.
pub fn standalone_apiserver_sim() -> PathBuf {
    let test_exe = std::env::current_exe().unwrap();
    let built = test_exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("apiserver-sim"));
    if let Some(path) = built.filter(|path| path.is_file()) {
        return path;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = std::process::Command::new(cargo)
        .args([
            "build",
            "-p",
            "kube-rt-apiserver-sim",
            "--bin",
            "apiserver-sim",
        ])
        .arg("--message-format=json")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(output.status.success(), "building apiserver-sim failed");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|msg| {
            msg["reason"] == "compiler-artifact" && msg["target"]["name"] == "apiserver-sim"
        })
        .find_map(|msg| msg["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported the apiserver-sim executable")
}

/// Whether `kubectl` is installed (on PATH).
pub use testkit::kubectl::installed as kubectl_installed;
