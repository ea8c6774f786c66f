//! The real `kubectl` pointed at a simulator, for the kubectl tests: its own kubeconfig and
//! discovery cache, runs off the async runtime.

use std::path::{Path, PathBuf};

use apiserver_sim::ApiServer;

/// kubectl with a kubeconfig for one server and a fresh discovery cache.
pub struct Kubectl {
    kubeconfig: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    /// Writes the server's kubeconfig into `dir` (the cache goes there too).
    pub fn for_server(server: &ApiServer, dir: &Path) -> Self {
        let k = Self {
            kubeconfig: dir.join("kubeconfig"),
            cache: dir.join("cache"),
        };
        server.write_kubeconfig(&k.kubeconfig).expect("kubeconfig");
        k
    }

    /// Runs kubectl (off the async runtime) and returns (success, stdout + stderr).
    pub async fn run(&self, args: &[&str]) -> (bool, String) {
        let out = testkit::kubectl::run_async(&self.kubeconfig, &self.cache, args).await;
        (out.success, out.text())
    }

    /// Runs kubectl and fails the test (with its output) unless it succeeds.
    pub async fn ok(&self, args: &[&str]) -> String {
        let (ok, out) = self.run(args).await;
        assert!(ok, "kubectl {}: {out}", args.join(" "));
        out
    }
}

/// A kubectl test's start: the server `builder` starts and kubectl for it, with the
/// kubeconfig and cache in a temporary directory (keep it while kubectl runs); `None`, after
/// a notice naming `test`, when kubectl is not installed.
pub async fn start(
    test: &str,
    builder: apiserver_sim::ApiServerBuilder,
) -> Option<(ApiServer, tempfile::TempDir, Kubectl)> {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping {test}");
        return None;
    }
    let server = builder.start().await.expect("server starts");
    let dir = tempfile::tempdir().expect("tempdir");
    let kubectl = Kubectl::for_server(&server, dir.path());
    Some((server, dir, kubectl))
}
