//! Shards that die: several sharded manager *processes* of one ring split a few thousand
//! ConfigMaps (each mirrored into an owned Secret) against apiserver-sim in chaos mode, while a
//! driver churns the ConfigMaps; shards are killed with SIGKILL at seeded moments and
//! restarted under the same name, the Lease writes fail until a shard gives its Lease up (and
//! is restarted), one shard is added and one removed gracefully halfway, and one is killed and
//! kept down until the sharder takes its Lease over. Then the driver and chaos stop and the
//! soak checks (see `soak.rs`):
//!
//! - no object reconciled by two processes in overlapping time (from every process's reconcile
//!   journal), and every reconcile worked on a version labelled with its own shard (from the
//!   label history the parent watched);
//! - every object's final version reconciled by its final shard, and mirrored;
//! - after the last membership change the assignment is the ring's, Secrets on their owner's
//!   shard;
//! - objects moved per membership change ≤ 1.5 × objects ÷ shards;
//! - the run exercised it: kills, lost Leases, a takeover, moves and drains happened.
//!
//! Before it, a shorter run with the drain handshake off (see `negative.rs`) must show
//! overlapping reconciles: the checker can fail.
//!
//! This binary is its own harness (`harness = false`): run without `SHARDS_MEMBER` it is the
//! soak, and it starts copies of itself with `SHARDS_MEMBER` set as the shards (see
//! `member.rs`). Environment: `SHARDS_SEED` (default [`DEFAULT_SEED`]), `SHARDS_SECS` (the
//! chaos phase, default [`DEFAULT_SECS`]), `SHARDS_OBJECTS` (default [`DEFAULT_OBJECTS`]),
//! `SHARDS_MEMBERS` (shards at the start, 2 to 8; default 3), `SHARDS_PROFILE` (the chaos
//! profile: `gentle` (default), `standard`, `harsh` or `none`), `SHARDS_PART` (`all`, the
//! default; `soak` or `negative` for one of the two runs). Every failure message starts with
//! them.
//!
//! With `KUBE_RT_TEST_KUBECONFIG` set both runs go against that real cluster instead (see
//! `target.rs` and `../real/`): each in a namespace of its own, removed at the end; no
//! simulator and no simulated faults (`SHARDS_PROFILE` does not apply); the shards
//! authenticate as a ServiceAccount of the namespace, and their Lease writes fail because its
//! Lease RoleBinding is withdrawn (real 403s); the cluster's garbage collector deletes the
//! Secrets of deleted ConfigMaps (the soak does on a cluster without one). Shards are still
//! SIGKILLed, added, removed and taken over.

#[path = "../members/mod.rs"]
mod members;
#[path = "../real/mod.rs"]
mod real;
#[path = "../workload/mod.rs"]
mod workload;

mod checks;
mod member;
mod negative;
mod observe;
mod run;
mod soak;
mod target;

use std::future::Future;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ChaosConfig, ChaosProfile};
use tokio::time::Instant;

use member::PREFIX;
use members::{MemberEnv, harness};
use target::Target;

const DEFAULT_SEED: u64 = 20_261_128;
const DEFAULT_SECS: u64 = 30;
const DEFAULT_OBJECTS: u64 = 300;
const TEST_NAME: &str = "shard_processes_killed_added_and_removed_under_chaos";

/// Which of the two runs to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    All,
    Soak,
    Negative,
}

#[derive(Debug, Clone)]
struct Settings {
    seed: u64,
    secs: u64,
    objects: usize,
    members: usize,
    /// The chaos profile of the soak (`None`: no chaos, always against a real server).
    profile: Option<ChaosProfile>,
    part: Part,
    /// The real cluster's admin kubeconfig (`KUBE_RT_TEST_KUBECONFIG`).
    real: Option<PathBuf>,
}

impl Settings {
    fn from_env() -> Result<Self, String> {
        let members = harness::env_number("SHARDS_MEMBERS", 3)?;
        if !(2..=8).contains(&members) {
            return Err(format!("SHARDS_MEMBERS must be 2 to 8, not {members}"));
        }
        let objects = harness::env_number("SHARDS_OBJECTS", DEFAULT_OBJECTS)?;
        if objects < 10 {
            return Err(format!("SHARDS_OBJECTS must be at least 10, not {objects}"));
        }
        let part = match std::env::var("SHARDS_PART").unwrap_or_default().trim() {
            "" | "all" => Part::All,
            "soak" => Part::Soak,
            "negative" => Part::Negative,
            other => {
                return Err(format!(
                    "SHARDS_PART must be all, soak or negative, not {other:?}"
                ));
            }
        };
        let real = real::named_kubeconfig();
        let profile = match std::env::var("SHARDS_PROFILE").unwrap_or_default().trim() {
            _ if real.is_some() => None,
            "" => Some(ChaosProfile::Gentle),
            "none" => None,
            name => Some(
                name.parse()
                    .map_err(|e| format!("SHARDS_PROFILE must be none or a chaos profile: {e}"))?,
            ),
        };
        Ok(Self {
            seed: harness::env_number("SHARDS_SEED", DEFAULT_SEED)?,
            secs: harness::env_number("SHARDS_SECS", DEFAULT_SECS)?,
            objects: usize::try_from(objects).map_err(|e| format!("SHARDS_OBJECTS: {e}"))?,
            members: usize::try_from(members).unwrap_or(3),
            profile,
            part,
            real,
        })
    }
}

impl std::fmt::Display for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SHARDS_SEED={} SHARDS_SECS={} SHARDS_OBJECTS={} SHARDS_MEMBERS={} SHARDS_PROFILE={} \
             SHARDS_PART={}",
            self.seed,
            self.secs,
            self.objects,
            self.members,
            self.profile
                .map_or_else(|| "none".to_owned(), |p| p.to_string()),
            match self.part {
                Part::All => "all",
                Part::Soak => "soak",
                Part::Negative => "negative",
            }
        )?;
        match &self.real {
            Some(path) => write!(f, " {}={}", real::KUBECONFIG_VAR, path.display()),
            None => Ok(()),
        }
    }
}

/// Runs `body` on a server of its own: the simulator (with `chaos`), or a namespace
/// `kube-rt-<name>-…` of the real cluster; then takes the server down, the real namespace
/// removed whether `body` passed or not. `body`'s summary (with who collected the garbage on a
/// real cluster), or what failed.
async fn with_target<F, Fut>(
    settings: &Settings,
    name: &str,
    chaos: Option<ChaosConfig>,
    body: F,
) -> Result<String, String>
where
    F: FnOnce(Arc<Target>) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let target = Arc::new(match &settings.real {
        None => Target::sim(chaos, dir.path()).await?,
        Some(admin) => Target::real(admin, name, dir.path()).await?,
    });
    let outcome = body(Arc::clone(&target)).await;
    // A run that failed early may still be stopping its observer, which holds the target.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Arc::strong_count(&target) > 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let target = Arc::try_unwrap(target).map_err(|_| "the target is still shared".to_owned())?;
    match (outcome, target.finish().await) {
        (Ok(summary), Ok(None)) => Ok(summary),
        (Ok(summary), Ok(Some(collected))) => Ok(format!("{summary}; {collected}")),
        (Err(e), Ok(_)) => Err(e),
        (Ok(_), Err(e)) => Err(format!("cleanup: {e}")),
        (Err(e), Err(cleanup)) => Err(format!("{e}; cleanup: {cleanup}")),
    }
}

fn main() -> ExitCode {
    if let Some(env) = MemberEnv::from_env(PREFIX) {
        return ExitCode::from(u8::try_from(member::run(&env)).unwrap_or(2));
    }
    harness::run_test(TEST_NAME, || {
        let settings = Settings::from_env()?;
        let both = async {
            let mut summary = Vec::new();
            if settings.part != Part::Soak {
                summary.push(negative::run(settings.clone()).await?);
            }
            if settings.part != Part::Negative {
                summary.push(soak::run(settings.clone()).await?);
            }
            Ok::<_, String>(format!("shards {settings}:\n{}", summary.join("\n")))
        };
        members::runtime()?
            .block_on(both)
            .map_err(|e| format!("{settings}: {e}"))
    })
}
