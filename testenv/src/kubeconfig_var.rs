//! Which server the tests run against: the environment variable [`KUBECONFIG_VAR`] that names an
//! existing cluster's kubeconfig, and what it says. Read by the cluster mode, the skip helpers and
//! the error messages alike, so it depends on nothing else of the crate.

use std::path::PathBuf;

/// The environment variable naming the kubeconfig of an existing cluster to test against;
/// unset or empty, tests run against the embedded simulator.
pub const KUBECONFIG_VAR: &str = "KUBE_RT_TEST_KUBECONFIG";

/// The kubeconfig [`KUBECONFIG_VAR`] names, if it names one.
pub fn named_kubeconfig() -> Option<PathBuf> {
    std::env::var_os(KUBECONFIG_VAR)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

/// Whether tests run against an existing cluster ([`KUBECONFIG_VAR`] is set).
pub fn on_existing_cluster() -> bool {
    named_kubeconfig().is_some()
}
