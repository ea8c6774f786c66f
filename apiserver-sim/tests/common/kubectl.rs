//! The real `kubectl` pointed at a simulator, for the kubectl tests: its own kubeconfig and
//! discovery cache, runs off the async runtime.

use std::path::{Path, PathBuf};

use kube_rt_apiserver_sim::ApiServer;

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
