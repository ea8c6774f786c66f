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

#[path = "../members/mod.rs"]
mod members;
#[path = "../workload/mod.rs"]
mod workload;

mod checks;
mod member;
mod negative;
mod observe;
mod run;
mod soak;

use std::process::ExitCode;

use apiserver_sim::ChaosProfile;

use member::PREFIX;
use members::{MemberEnv, harness};

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

#[derive(Debug, Clone, Copy)]
struct Settings {
    seed: u64,
    secs: u64,
    objects: usize,
    members: usize,
    /// The chaos profile of the soak (`None`: no chaos).
    profile: Option<ChaosProfile>,
    part: Part,
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
        let profile = match std::env::var("SHARDS_PROFILE").unwrap_or_default().trim() {
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
        )
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
                summary.push(negative::run(settings).await?);
            }
            if settings.part != Part::Negative {
                summary.push(soak::run(settings).await?);
            }
            Ok::<_, String>(format!("shards {settings}:\n{}", summary.join("\n")))
        };
        members::runtime()?
            .block_on(both)
            .map_err(|e| format!("{settings}: {e}"))
    })
}
