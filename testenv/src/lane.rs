//! Which server the tests run against, as the environment variables say: the embedded simulator
//! (nothing set), an existing cluster ([`KUBECONFIG_VAR`] names its kubeconfig), or a control
//! plane testenv starts itself ([`ASSETS_VAR`] names a directory of its binaries). Read by the
//! builder, the skip helpers and the workspace's own test helpers alike, so it depends on nothing
//! else of the crate.

use std::path::PathBuf;

/// The environment variable naming the kubeconfig of an existing cluster to test against;
/// unset or empty, tests run against the embedded simulator.
pub const KUBECONFIG_VAR: &str = "KUBE_RT_TEST_KUBECONFIG";

/// The environment variable naming a directory with `kube-apiserver` and `etcd` (and, for the
/// tests that ask for it, `kube-controller-manager`): the layout of controller-runtime's
/// envtest binaries. Set, every environment of a test process runs on one control plane that
/// testenv starts from there for that process (see [`ControlPlane`](crate::ControlPlane)).
///
/// `KUBEBUILDER_ASSETS` alone does not select this mode: Go developers often keep it exported
/// for their own projects, and a Rust project's tests would then leave the simulator without
/// being asked. `KUBE_RT_TEST_ASSETS=$KUBEBUILDER_ASSETS cargo test` opts in.
pub const ASSETS_VAR: &str = "KUBE_RT_TEST_ASSETS";

/// The server the environment variables choose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lane {
    /// Neither variable is set: the embedded simulator.
    Simulator,
    /// [`KUBECONFIG_VAR`] names this kubeconfig.
    ExistingCluster(PathBuf),
    /// [`ASSETS_VAR`] names this directory of binaries.
    ControlPlane(PathBuf),
}

impl Lane {
    /// The lane of this process's environment variables; an error naming both when both are
    /// set (the tests would otherwise pick one of two servers silently).
    pub fn from_env() -> Result<Self, String> {
        Self::choose(named_kubeconfig(), named_assets())
    }

    /// The lane of a kubeconfig and a directory of binaries, each named or not.
    fn choose(kubeconfig: Option<PathBuf>, assets: Option<PathBuf>) -> Result<Self, String> {
        match (kubeconfig, assets) {
            (None, None) => Ok(Self::Simulator),
            (Some(kubeconfig), None) => Ok(Self::ExistingCluster(kubeconfig)),
            (None, Some(assets)) => Ok(Self::ControlPlane(assets)),
            (Some(_), Some(_)) => Err(format!(
                "both {KUBECONFIG_VAR} and {ASSETS_VAR} are set: unset one (the first names an \
                 existing cluster, the second the binaries of a control plane testenv starts)"
            )),
        }
    }

    /// Why the tests run where they do, for messages: which variable is set.
    pub fn reason(&self) -> String {
        match self {
            Self::Simulator => format!("neither {KUBECONFIG_VAR} nor {ASSETS_VAR} is set"),
            Self::ExistingCluster(_) => format!("{KUBECONFIG_VAR} is set"),
            Self::ControlPlane(_) => format!("{ASSETS_VAR} is set"),
        }
    }
}

/// The kubeconfig [`KUBECONFIG_VAR`] names, if it names one.
pub fn named_kubeconfig() -> Option<PathBuf> {
    named(KUBECONFIG_VAR)
}

/// The directory of binaries [`ASSETS_VAR`] names, if it names one.
pub fn named_assets() -> Option<PathBuf> {
    named(ASSETS_VAR)
}

/// Whether tests run against a real API server rather than the simulator: an existing cluster
/// ([`KUBECONFIG_VAR`] is set) or testenv's own control plane ([`ASSETS_VAR`] is set). Either
/// is a cluster the test did not make for itself alone, and the same rules hold on both: a
/// scratch namespace per environment, nothing of the simulator's own.
pub fn on_existing_cluster() -> bool {
    named_kubeconfig().is_some() || named_assets().is_some()
}

fn named(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variable_chooses_its_server_and_both_are_refused() {
        let path = || Some(PathBuf::from("/p"));
        assert_eq!(Lane::choose(None, None), Ok(Lane::Simulator));
        assert_eq!(
            Lane::choose(path(), None),
            Ok(Lane::ExistingCluster("/p".into()))
        );
        assert_eq!(
            Lane::choose(None, path()),
            Ok(Lane::ControlPlane("/p".into()))
        );
        let refused = Lane::choose(path(), path()).unwrap_err();
        assert!(refused.contains(KUBECONFIG_VAR) && refused.contains(ASSETS_VAR));
    }
}
