//! Leaders that die: several manager *processes* elect on one Lease against apiserver-sim in
//! chaos mode while a driver churns ConfigMaps; the leader process is killed with SIGKILL at
//! seeded moments and restarted, and once, halfway, every Lease write fails until the leader
//! steps down on its own (the lost-lease path, for real). Then the driver and chaos stop and
//! the soak checks:
//!
//! - never two leaders acting at once: from the Lease history (observed by this process) and
//!   the reconcile log each member writes, every reconcile lies inside a term of its member,
//!   and no two members' reconciles overlap in time;
//! - every change reconciled: every object on the server was reconciled successfully at its
//!   final resourceVersion, and the controllers' work is done (Secrets mirrored and stamped);
//! - every running member's cache equals the server;
//! - the run exercised it: leaders were killed, one stepped down after losing its lease,
//!   several members reconciled, faults were injected.
//!
//! With `KUBE_RT_TEST_KUBECONFIG` set the same soak runs against that real cluster instead
//! (see `target.rs` and `../real/`): no simulator and no simulated faults; a namespace of the
//! run's own, removed at the end; the members authenticate as a ServiceAccount, and the Lease
//! writes fail because its Lease RoleBinding is withdrawn (real 403s); the leader is still
//! SIGKILLed. With `KUBE_RT_TEST_RESTART` (a shell command) the API server is also restarted
//! a quarter into the run, after compacting etcd when `KUBE_RT_TEST_ETCD` names it, and the
//! soak proves that the restart cost watches a real 410 (see `episodes.rs`).
//!
//! This binary is its own harness (`harness = false`): run without `LEADERS_MEMBER` it is the
//! soak, and it starts copies of itself with `LEADERS_MEMBER` set as the members (see
//! `member.rs`). Environment: `LEADERS_SEED` (default [`DEFAULT_SEED`]), `LEADERS_SECS` (the
//! chaos phase, default [`DEFAULT_SECS`], against a real server [`DEFAULT_REAL_SECS`]),
//! `LEADERS_MEMBERS` (default 3), `LEADERS_PROFILE` (default `standard`; the simulator's
//! only). Every failure message starts with them.

#[path = "../members/mod.rs"]
mod members;
#[path = "../real/mod.rs"]
mod real;
#[path = "../workload/mod.rs"]
mod workload;

mod episodes;
mod history;
mod member;
mod target;

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::ChaosProfile;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use history::History;
use member::PREFIX;
use members::slot::{Slot, all_intervals};
use members::{LOST_LEASE_EXIT, MemberEnv, harness};
use target::Target;

const DEFAULT_SEED: u64 = 20_261_125;
const DEFAULT_SECS: u64 = 40;
/// The chaos phase against a real server: longer, so that a restart of the server fits.
const DEFAULT_REAL_SECS: u64 = 120;
const NAMES: usize = 10;
/// How long convergence may take once chaos stopped.
const QUIESCE_LIMIT: Duration = Duration::from_secs(60);

/// The soak's settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Seeds the driver, the kill times and the simulator's chaos.
    pub seed: u64,
    /// The chaos phase's length.
    pub secs: u64,
    /// Member slots.
    pub members: usize,
    /// The simulator's chaos profile; None against a real server.
    pub profile: Option<ChaosProfile>,
    /// The real cluster's admin kubeconfig (`KUBE_RT_TEST_KUBECONFIG`).
    pub real: Option<std::path::PathBuf>,
}

impl Settings {
    fn from_env() -> Result<Self, String> {
        let real = real::named_kubeconfig();
        let profile = match std::env::var("LEADERS_PROFILE")
            .ok()
            .filter(|v| !v.trim().is_empty())
        {
            _ if real.is_some() => None,
            None => Some(ChaosProfile::Standard),
            Some(name) => Some(
                name.trim()
                    .parse()
                    .map_err(|e| format!("LEADERS_PROFILE: {e}"))?,
            ),
        };
        let members = harness::env_number("LEADERS_MEMBERS", 3)?;
        if members < 2 {
            return Err("LEADERS_MEMBERS must be at least 2".to_owned());
        }
        let default_secs = if real.is_some() {
            DEFAULT_REAL_SECS
        } else {
            DEFAULT_SECS
        };
        Ok(Self {
            seed: harness::env_number("LEADERS_SEED", DEFAULT_SEED)?,
            secs: harness::env_number("LEADERS_SECS", default_secs)?,
            members: usize::try_from(members).unwrap_or(3),
            profile,
            real,
        })
    }
}

impl std::fmt::Display for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LEADERS_SEED={} LEADERS_SECS={} LEADERS_MEMBERS={} ",
            self.seed, self.secs, self.members
        )?;
        match (&self.profile, &self.real) {
            (Some(profile), _) => write!(f, "LEADERS_PROFILE={profile}"),
            (None, Some(path)) => write!(f, "{}={}", real::KUBECONFIG_VAR, path.display()),
            (None, None) => write!(f, "no server"),
        }
    }
}

const TEST_NAME: &str = "leader_processes_killed_under_chaos";

fn main() -> ExitCode {
    if let Some(env) = MemberEnv::from_env(PREFIX) {
        return ExitCode::from(u8::try_from(member::run(&env)).unwrap_or(2));
    }
    harness::run_test(TEST_NAME, || {
        let settings = Settings::from_env()?;
        members::runtime()?
            .block_on(run(&settings))
            .map_err(|e| format!("{settings}: {e}"))
    })
}

/// Sets the server up, runs the soak, and takes the server down (on a real cluster the
/// run's namespace is removed whether the soak passed or not); the summary, or what failed.
async fn run(settings: &Settings) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let target = Arc::new(match &settings.real {
        None => Target::sim(settings, dir.path()).await?,
        Some(admin) => Target::real(admin, dir.path()).await?,
    });
    let stop_history = CancellationToken::new();
    let outcome = soak(settings, &target, dir.path(), stop_history.clone()).await;
    // A soak that failed early leaves the Lease recorder running, holding the target.
    stop_history.cancel();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Arc::strong_count(&target) > 1 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let target = Arc::try_unwrap(target).map_err(|_| "the target is still shared".to_owned())?;
    let cleaned = target.finish().await;
    match (outcome, cleaned) {
        (Ok(summary), Ok(None)) => Ok(summary),
        (Ok(summary), Ok(Some(collected))) => Ok(format!("{summary}; {collected}")),
        (Err(e), Ok(_)) => Err(e),
        (Ok(_), Err(e)) => Err(format!("cleanup: {e}")),
        (Err(e), Err(cleanup)) => Err(format!("{e}; cleanup: {cleanup}")),
    }
}

/// The soak; its summary line, or what failed.
/// `stop_history` stops the Lease recorder (the soak cancels it when it is done).
async fn soak(
    settings: &Settings,
    target: &Arc<Target>,
    dir: &Path,
    stop_history: CancellationToken,
) -> Result<String, String> {
    let history = History::default();
    let recording = tokio::spawn(
        history
            .clone()
            .record(Arc::clone(target), stop_history.clone()),
    );
    let mut slots: Vec<Slot> = (0..settings.members)
        .map(|i| {
            let slot = Slot::new(PREFIX, format!("m{i}"), dir, target.members_kubeconfig());
            match target.cluster() {
                Some(cluster) => slot
                    .with_env(member::NAMESPACE_ENV, cluster.namespace())
                    .with_env(member::LOG_ENV, episodes::MEMBER_TRACE)
                    .with_stderr_files(),
                None => slot,
            }
        })
        .collect();
    for slot in &mut slots {
        slot.start()?;
    }

    let started = Instant::now();
    let chaos_end = started + Duration::from_secs(settings.secs);
    let driver = {
        let cms: Api<ConfigMap> = Api::namespaced(target.client()?, target.namespace());
        tokio::spawn(workload::drive(
            cms,
            settings.seed,
            NAMES,
            10..60,
            chaos_end,
        ))
    };

    // Chaos phase: kill the leader at seeded moments; a quarter in, restart a real server (if
    // a command is named); halfway, make the leader lose its lease.
    let mut rng = fastrand::Rng::with_seed(settings.seed ^ 0x6c65_6164);
    let restart = episodes::RestartPlan::for_target(target);
    let restart_at = started + Duration::from_secs(settings.secs) / 4;
    let mut restarted = None;
    let lease_loss_at = started + Duration::from_secs(settings.secs) / 2;
    let mut lease_lost = None;
    let mut kills = Vec::new();
    let mut next_kill = started + Duration::from_millis(rng.u64(3_000..8_000));
    while Instant::now() < chaos_end {
        restart_exited(&mut slots)?;
        let now = Instant::now();
        if let Some(plan) = restart
            .as_ref()
            .filter(|_| restarted.is_none() && now >= restart_at)
        {
            restarted = Some(plan.run(target, &mut slots).await?);
            next_kill = Instant::now() + Duration::from_millis(rng.u64(3_000..8_000));
        } else if lease_lost.is_none() && now >= lease_loss_at {
            lease_lost = Some(episodes::lose_lease(target, &mut slots, settings.seed).await?);
            next_kill = Instant::now() + Duration::from_millis(rng.u64(3_000..8_000));
        } else if now >= next_kill {
            if let Some(victim) = leader_slot(target, &slots).await {
                let identity = slots[victim].kill()?;
                kills.push(identity);
                slots[victim].start()?;
            }
            next_kill = now + Duration::from_millis(rng.u64(3_000..8_000));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (driven_ok, driven) = driver.await.map_err(|e| format!("driver: {e}"))?;

    // Quiesce: no more faults; wait for convergence.
    let (faults, faulted) = target.stop_faults();
    let deadline = Instant::now() + QUIESCE_LIMIT;
    let mut gaps = convergence_gaps(target, &mut slots).await?;
    while !gaps.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        gaps = convergence_gaps(target, &mut slots).await?;
    }
    let converged_after = Instant::now() - chaos_end;
    stop_history.cancel();
    recording.await.map_err(|e| format!("lease history: {e}"))?;
    for slot in &mut slots {
        slot.kill()?;
    }
    if !gaps.is_empty() {
        return Err(format!(
            "not converged {QUIESCE_LIMIT:?} after chaos: {gaps:#?}"
        ));
    }

    let intervals = all_intervals(&slots)?;
    let terms = history.terms();
    history.check_complete()?;
    let violations = history::safety_violations(&terms, &intervals);
    if !violations.is_empty() {
        return Err(format!(
            "{} safety violations: {violations:#?}; terms {terms:#?}",
            violations.len()
        ));
    }
    let reconcilers: std::collections::BTreeSet<&str> =
        intervals.iter().map(|r| r.member.as_str()).collect();
    let stepped_down = lease_lost.ok_or("the lost-lease episode never ran")?;
    if kills.is_empty() {
        return Err("no leader was killed".to_owned());
    }
    if reconcilers.len() < 2 {
        return Err(format!("only {reconcilers:?} reconciled"));
    }
    if !faulted {
        return Err("no fault injected".to_owned());
    }
    let restart = match (&restart, &restarted) {
        (_, Some(episode)) => {
            episode.check()?;
            format!("; {episode}")
        }
        (Some(_), None) => return Err("the restart never ran".to_owned()),
        (None, None) => String::new(),
    };
    Ok(format!(
        "leaders {settings}: driver ops {driven_ok}/{driven} ok, {} reconciles by {} members {reconcilers:?}, \
         {} terms, leaders killed {kills:?}, {stepped_down} stepped down after losing its lease, \
         {} incarnations, converged {converged_after:?} after chaos; {faults}{restart}",
        intervals.len(),
        reconcilers.len(),
        terms.len(),
        slots.iter().map(Slot::incarnations).sum::<u32>(),
    ))
}

/// Restarts members that exited on their own (a lost lease, or a failure).
pub fn restart_exited(slots: &mut [Slot]) -> Result<(), String> {
    for slot in slots {
        if let Some(code) = slot.exited()? {
            if code != LOST_LEASE_EXIT {
                return Err(format!("member {} exited with {code}", slot.identity()));
            }
            slot.start()?;
        }
    }
    Ok(())
}

/// The slot whose member holds the Lease on the server.
pub async fn leader_slot(target: &Target, slots: &[Slot]) -> Option<usize> {
    let holder = target.lease_holder().await?;
    slots.iter().position(|s| s.identity() == holder)
}

/// What still differs once chaos stopped: members' caches against the server, objects not
/// reconciled at their final version, work not done. Empty once converged.
async fn convergence_gaps(target: &Target, slots: &mut [Slot]) -> Result<Vec<String>, String> {
    restart_exited(slots)?;
    let (cms, secrets) = match target.objects().await {
        Ok(objects) => objects,
        Err(e) => return Ok(vec![format!("the server's objects: {e}")]),
    };
    let want: member::Cache = [
        (
            "configmaps".to_owned(),
            workload::versions::<ConfigMap>(&cms),
        ),
        ("secrets".to_owned(), workload::versions::<Secret>(&secrets)),
    ]
    .into();
    let mut gaps = Vec::new();
    for slot in slots.iter() {
        match slot.snapshot::<member::Snapshot>().map(|s| s.cache) {
            Some(have) if have == want => {}
            have => gaps.push(format!(
                "{} cache {have:?} != server {want:?}",
                slot.identity()
            )),
        }
    }
    let intervals = all_intervals(slots.iter())?;
    let ns = target.namespace();
    for (controller, objects) in [("mirror", &want["configmaps"]), ("stamp", &want["secrets"])] {
        for (name, rv) in objects {
            let key = format!("{ns}/{name}");
            let reconciled = intervals.iter().any(|r| {
                r.ok && r.controller == controller && r.key == key && r.seen_rv.as_ref() == Some(rv)
            });
            if !reconciled {
                gaps.push(format!(
                    "{controller}: {name} at {rv} was never reconciled at that version"
                ));
            }
        }
    }
    gaps.extend(workload::unfinished(&cms, &secrets));
    Ok(gaps)
}
