//! What the multi-process soaks (`leaders`, `shards`) share: the member processes they start
//! (copies of the soak's own binary, told what to be through their environment), the
//! reconcile journal each member writes, and the libtest-like front of a binary that is its
//! own harness.
//!
//! - [`MemberEnv`]: what a member reads from its environment (its identity, the kubeconfig,
//!   where to journal and where to write a snapshot), under a prefix of the soak's own;
//! - [`run_member`]: a member's main: a runtime, a client, the journal, and an exit code that
//!   tells the parent how it ended ([`LOST_LEASE_EXIT`] when it lost its Lease);
//! - [`slot::Slot`]: one member at a time, started, killed (SIGKILL), stopped (SIGTERM) and
//!   restarted as a new incarnation by the parent;
//! - [`journal`]: the reconcile log and reading it back;
//! - [`harness`]: `--list`, name filters and the result lines `cargo test` expects.

#![allow(dead_code)]

pub mod harness;
pub mod journal;
pub mod slot;

use std::ffi::OsString;
use std::future::Future;
use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};

use journal::Writer;

/// Exit code of a member that lost its Lease (and stopped working).
pub const LOST_LEASE_EXIT: i32 = 3;
/// Exit code of a member that failed otherwise.
pub const FAILED_EXIT: i32 = 2;

/// What the parent tells a member through its environment.
pub struct MemberEnv {
    /// This incarnation's identity (`<slot>-<incarnation>`).
    pub identity: String,
    pub kubeconfig: PathBuf,
    /// The reconcile journal to append to.
    pub log: PathBuf,
    /// Where the member may write what it wants the parent to read while it runs.
    pub snapshot: PathBuf,
}

impl MemberEnv {
    const IDENTITY: &'static str = "MEMBER";
    const KUBECONFIG: &'static str = "KUBECONFIG";
    const LOG: &'static str = "LOG";
    const SNAPSHOT: &'static str = "SNAPSHOT";

    /// The member's settings, when this process is a member of a soak whose variables start
    /// with `prefix` (`<prefix>_MEMBER` set).
    pub fn from_env(prefix: &str) -> Option<Self> {
        let identity = std::env::var(format!("{prefix}_{}", Self::IDENTITY)).ok()?;
        let path = |name: &str| {
            std::env::var_os(format!("{prefix}_{name}"))
                .map(PathBuf::from)
                .unwrap_or_default()
        };
        Some(Self {
            identity,
            kubeconfig: path(Self::KUBECONFIG),
            log: path(Self::LOG),
            snapshot: path(Self::SNAPSHOT),
        })
    }

    /// The environment to start a member with.
    pub fn vars(&self, prefix: &str) -> Vec<(String, OsString)> {
        [
            (Self::IDENTITY, OsString::from(&self.identity)),
            (Self::KUBECONFIG, self.kubeconfig.clone().into()),
            (Self::LOG, self.log.clone().into()),
            (Self::SNAPSHOT, self.snapshot.clone().into()),
        ]
        .into_iter()
        .map(|(name, value)| (format!("{prefix}_{name}"), value))
        .collect()
    }
}

/// A multi-threaded runtime with two workers (the machines these soaks run on are small).
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| format!("runtime: {e}"))
}

/// A client of the server the kubeconfig at `path` names.
pub async fn client(path: &Path) -> Result<kube::Client, String> {
    let kubeconfig = Kubeconfig::read_from(path).map_err(|e| e.to_string())?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|e| e.to_string())?;
    kube::Client::try_from(config).map_err(|e| e.to_string())
}

/// How a member's run ended, as its exit code says.
pub type Served = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// A member's main: runs `serve` with a client and the journal until it returns; the exit
/// code: 0 when it returned `Ok`, [`LOST_LEASE_EXIT`] when `lost_lease` says its error is the
/// loss of its Lease, [`FAILED_EXIT`] on any other failure (written to stderr).
pub fn run_member<F, Fut>(
    env: &MemberEnv,
    lost_lease: impl Fn(&controller_runtime::manager::Error) -> bool,
    serve: F,
) -> i32
where
    F: FnOnce(kube::Client, Writer) -> Fut,
    Fut: Future<Output = Served>,
{
    let failed = |e: String| {
        eprintln!("member {}: {e}", env.identity);
        FAILED_EXIT
    };
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(e) => return failed(e),
    };
    let log = match Writer::open(&env.log, &env.identity) {
        Ok(log) => log,
        Err(e) => return failed(format!("{}: {e}", env.log.display())),
    };
    let client = match runtime.block_on(client(&env.kubeconfig)) {
        Ok(client) => client,
        Err(e) => return failed(e),
    };
    match runtime.block_on(serve(client, log)) {
        Ok(()) => 0,
        Err(e) if e.downcast_ref().is_some_and(&lost_lease) => LOST_LEASE_EXIT,
        Err(e) => failed(e.to_string()),
    }
}
