//! [`ns`]: the namespace a test works in, on the simulator or on a real server. Below the
//! server handle and the ConfigMap helpers, which both place their objects there.

use std::sync::LazyLock;

/// The namespace the simulator's tests work in.
pub(crate) const SIMULATOR_NAMESPACE: &str = "default";

/// The namespace a test works in: `default` on the simulator; on a real server (an existing
/// cluster, testenv's own control plane) the process's own, `kube-rt-it-<pid>`.
pub fn ns() -> &'static str {
    static NAMESPACE: LazyLock<String> = LazyLock::new(|| {
        if testenv::on_existing_cluster() {
            format!("kube-rt-it-{}", std::process::id())
        } else {
            SIMULATOR_NAMESPACE.to_owned()
        }
    });
    &NAMESPACE
}
