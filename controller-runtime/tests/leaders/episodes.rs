//! The soak's two episodes beside the kills: the leader losing its lease (its Lease writes
//! fail until it steps down), and, against a real server, the API server restarted mid-run
//! (after an etcd compaction) with the proof that watches met a real 410.

use std::time::Duration;

use tokio::time::Instant;

use crate::member::{LEASE_SECS, RENEW_DEADLINE};
use crate::members::LOST_LEASE_EXIT;
use crate::members::slot::Slot;
use crate::real::access;
use crate::real::restart::{self, ETCD_ENV, Probe, RESTART_ENV};
use crate::target::Target;
use crate::{leader_slot, member, restart_exited};

/// How long the lease writes may fail before the leader must have stepped down: its renew
/// deadline, plus slack for a loaded machine.
const STEP_DOWN_LIMIT: Duration = Duration::from_secs(20);
/// How long the API server may take to be ready after the restart command returned.
const READY_LIMIT: Duration = Duration::from_secs(120);
/// The members' log against a real server: the reflector's notices, among them its relists
/// after a 410.
pub const MEMBER_TRACE: &str = "reflector=info";
/// What the reflector logs when a watch or a list is answered 410 (`reflector.rs`).
const EXPIRED: [&str; 2] = [
    "resource version expired; relisting",
    "cannot list at the last synced resource version",
];

/// What the reflector logs for any other failure (a broken watch among them).
const FAILURE: &str = "reflector failure";

/// How long the members that ran through a restart may take to relist once it is ready.
const RELIST_LIMIT: Duration = Duration::from_secs(30);

/// Makes every Lease write fail until the leader steps down and exits; its identity.
pub async fn lose_lease(target: &Target, slots: &mut [Slot], seed: u64) -> Result<String, String> {
    let deadline = Instant::now() + STEP_DOWN_LIMIT;
    let leader = loop {
        if let Some(i) = leader_slot(target, slots).await {
            break i;
        }
        if Instant::now() >= deadline {
            return Err("nobody led when the lease was to be lost".to_owned());
        }
        restart_exited(slots)?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    target.fail_lease_writes(seed).await?;
    let identity = slots[leader].identity().to_owned();
    let outcome = loop {
        match slots[leader].exited()? {
            Some(code) if code == LOST_LEASE_EXIT => break Ok(identity.clone()),
            Some(code) => {
                break Err(format!(
                    "{identity} exited with {code} instead of stepping down"
                ));
            }
            None if Instant::now() >= deadline => {
                break Err(format!(
                    "{identity} still runs {STEP_DOWN_LIMIT:?} after its lease writes began to fail \
                     (renew deadline {RENEW_DEADLINE:?}, lease {LEASE_SECS} s)"
                ));
            }
            None => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    target.restore_lease_writes().await?;
    slots[leader].start()?;
    outcome
}

/// The restart the user asked for (`KUBE_RT_TEST_RESTART`, and `KUBE_RT_TEST_ETCD` for the
/// compaction before it).
pub struct RestartPlan {
    command: String,
    etcd: Option<String>,
}

impl RestartPlan {
    /// The plan for `target`: none on the simulator; on a real server, none without a restart
    /// command (a notice says so), and no compaction without an etcd URL (likewise).
    pub fn for_target(target: &Target) -> Option<Self> {
        target.cluster()?;
        let Some(command) = restart::command_from_env() else {
            println!("notice: {RESTART_ENV} is not set: the API server restart run is skipped");
            return None;
        };
        let etcd = restart::etcd_from_env();
        if etcd.is_none() {
            println!(
                "notice: {ETCD_ENV} is not set: etcd is not compacted before the restart \
                 (the 410 is not forced through etcd)"
            );
        }
        Some(Self { command, etcd })
    }

    /// Compacts etcd (if named), restarts the API server, waits until it is ready, and probes
    /// a watch and an exact list from a resourceVersion taken before.
    pub async fn run(&self, target: &Target, slots: &mut [Slot]) -> Result<Restarted, String> {
        let cluster = target.cluster().ok_or("a restart needs a real server")?;
        let from = restart::list_version(cluster).await?;
        let lists_before: Vec<(String, u64)> = slots
            .iter()
            .filter_map(|s| Some((s.identity(), s.snapshot::<member::Snapshot>()?.lists)))
            .collect();
        let logged_before: Vec<(String, u64)> = slots
            .iter()
            .map(|s| {
                let identity = s.identity();
                let len = std::fs::metadata(s.stderr_path(&identity)).map_or(0, |m| m.len());
                (identity, len)
            })
            .collect();
        let leader = target.lease_holder().await;
        let compacted_to = match &self.etcd {
            Some(etcd) => Some(restart::compact(cluster, access::ACCOUNT, etcd).await?),
            None => None,
        };
        let took = restart::run_command(&self.command).await?;
        let ready_after = cluster.wait_ready(READY_LIMIT).await?;
        let probe = restart::probe(cluster, &from).await;
        // Members that exited meanwhile (a leader that could not renew steps down) are
        // replaced; the others lived through the restart and must relist.
        restart_exited(slots)?;
        let survivors: Vec<(String, u64)> = lists_before
            .into_iter()
            .filter(|(identity, _)| slots.iter().any(|s| &s.identity() == identity))
            .collect();
        let relists = await_relists(slots, &survivors).await;
        let expired = survivors
            .iter()
            .filter_map(|(identity, _)| {
                let slot = slots.iter().find(|s| &s.identity() == identity)?;
                let from = logged_before.iter().find(|(i, _)| i == identity)?.1;
                let log = std::fs::read(slot.stderr_path(identity)).ok()?;
                let since = String::from_utf8_lossy(log.get(from as usize..)?).into_owned();
                let count = |what: &[&str]| {
                    since
                        .lines()
                        .filter(|line| what.iter().any(|e| line.contains(e)))
                        .count()
                };
                Some((identity.clone(), count(&EXPIRED), count(&[FAILURE])))
            })
            .collect();
        Ok(Restarted {
            took,
            ready_after,
            compacted_to,
            probe,
            leader,
            survivors: survivors.len(),
            relists,
            expired,
        })
    }
}

/// What a restart did.
pub struct Restarted {
    /// How long the restart command ran.
    took: Duration,
    /// How long after it the server answered `/readyz`.
    ready_after: Duration,
    /// The etcd revision compacted to.
    compacted_to: Option<i64>,
    probe: Probe,
    /// The Lease holder before the restart.
    leader: Option<String>,
    /// How many members ran through the restart (the others exited and were replaced).
    survivors: usize,
    /// Those members, with the list requests they made since the restart began.
    relists: Vec<(String, u64)>,
    /// Those members, with the 410s and the other failures their reflectors logged since the
    /// restart began.
    expired: Vec<(String, usize, usize)>,
}

/// Polls (up to [`RELIST_LIMIT`]) until every member of `survivors` (identity, list requests
/// before the restart) has listed again; each one's list requests since.
async fn await_relists(slots: &[Slot], survivors: &[(String, u64)]) -> Vec<(String, u64)> {
    let deadline = Instant::now() + RELIST_LIMIT;
    loop {
        let relists: Vec<(String, u64)> = survivors
            .iter()
            .map(|(identity, before)| {
                let after = slots
                    .iter()
                    .find(|s| &s.identity() == identity)
                    .and_then(|s| s.snapshot::<member::Snapshot>())
                    .map_or(*before, |s| s.lists);
                (identity.clone(), after.saturating_sub(*before))
            })
            .collect();
        if relists.iter().all(|(_, n)| *n > 0) || Instant::now() >= deadline {
            return relists;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

impl Restarted {
    /// The restart proved what it should: some member lived through it and every such member
    /// relisted; after a compaction, the watch and the exact list from before it were 410s.
    ///
    /// The 410s the members' reflectors logged are reported, not required: a member whose
    /// watch broke (rather than closed cleanly) when the server went down relists at once from
    /// its last resourceVersion, which the new watch cache serves, without resuming the watch;
    /// one still in its first list starts over. Runs saw both: every member logging a 410, and
    /// none.
    pub fn check(&self) -> Result<(), String> {
        if self.compacted_to.is_some() && !self.probe.gone {
            return Err(format!(
                "etcd was compacted and the API server restarted, yet no 410: {}",
                self.probe
            ));
        }
        let idle: Vec<&String> = self
            .relists
            .iter()
            .filter(|(_, n)| *n == 0)
            .map(|(identity, _)| identity)
            .collect();
        if !idle.is_empty() {
            return Err(format!(
                "{idle:?} never relisted within {RELIST_LIMIT:?} after the restart"
            ));
        }
        if self.survivors == 0 {
            return Err("no member ran through the restart".to_owned());
        }
        Ok(())
    }
}

impl std::fmt::Display for Restarted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "API server restarted (Lease holder before: {:?}",
            self.leader
        )?;
        if let Some(revision) = self.compacted_to {
            write!(f, ", etcd compacted to revision {revision} first")?;
        }
        write!(
            f,
            "; command {:.1?}, ready {:.1?} after it); probe {}; {} members ran through the \
             restart, their list requests since: {:?}, the 410s and other failures their \
             reflectors logged: {:?}",
            self.took, self.ready_after, self.probe, self.survivors, self.relists, self.expired
        )
    }
}
