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
//! This binary is its own harness (`harness = false`): run without `LEADERS_MEMBER` it is the
//! soak, and it starts copies of itself with `LEADERS_MEMBER` set as the members (see
//! `member.rs`). Environment: `LEADERS_SEED` (default [`DEFAULT_SEED`]), `LEADERS_SECS` (the
//! chaos phase, default [`DEFAULT_SECS`]), `LEADERS_MEMBERS` (default 3), `LEADERS_PROFILE`
//! (default `standard`). Every failure message starts with them.

#[path = "../members/mod.rs"]
mod members;
#[path = "../workload/mod.rs"]
mod workload;

mod history;
mod member;
mod process;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, ChaosConfig, ChaosProfile, FailRule};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::Api;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use history::History;
use member::{LEASE_SECS, NS, PREFIX, RENEW_DEADLINE};
use members::slot::{Slot, all_intervals};
use members::{LOST_LEASE_EXIT, MemberEnv, harness};

const DEFAULT_SEED: u64 = 20_261_125;
const DEFAULT_SECS: u64 = 40;
const NAMES: usize = 10;
/// How long convergence may take once chaos stopped.
const QUIESCE_LIMIT: Duration = Duration::from_secs(60);
/// How long the lease writes may fail before the leader must have stepped down: its renew
/// deadline, plus slack for a loaded machine.
const STEP_DOWN_LIMIT: Duration = Duration::from_secs(20);

#[derive(Debug, Clone, Copy)]
struct Settings {
    seed: u64,
    secs: u64,
    members: usize,
    profile: ChaosProfile,
}

impl Settings {
    fn from_env() -> Result<Self, String> {
        let profile = match std::env::var("LEADERS_PROFILE")
            .ok()
            .filter(|v| !v.trim().is_empty())
        {
            None => ChaosProfile::Standard,
            Some(name) => name
                .trim()
                .parse()
                .map_err(|e| format!("LEADERS_PROFILE: {e}"))?,
        };
        let members = harness::env_number("LEADERS_MEMBERS", 3)?;
        if members < 2 {
            return Err("LEADERS_MEMBERS must be at least 2".to_owned());
        }
        Ok(Self {
            seed: harness::env_number("LEADERS_SEED", DEFAULT_SEED)?,
            secs: harness::env_number("LEADERS_SECS", DEFAULT_SECS)?,
            members: usize::try_from(members).unwrap_or(3),
            profile,
        })
    }
}

impl std::fmt::Display for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "LEADERS_SEED={} LEADERS_SECS={} LEADERS_MEMBERS={} LEADERS_PROFILE={}",
            self.seed, self.secs, self.members, self.profile
        )
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
            .block_on(soak(settings))
            .map_err(|e| format!("{settings}: {e}"))
    })
}

/// The soak; its summary line, or what failed.
async fn soak(settings: Settings) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let server = Arc::new(
        ApiServer::builder()
            .bookmark_interval(Duration::from_secs(1))
            .chaos(ChaosConfig {
                seed: settings.seed,
                profile: settings.profile,
            })
            .start()
            .await
            .map_err(|e| format!("server: {e}"))?,
    );
    let kubeconfig = dir.path().join("kubeconfig");
    server
        .write_kubeconfig(&kubeconfig)
        .map_err(|e| e.to_string())?;
    let history = History::default();
    let stop_history = CancellationToken::new();
    let recording = tokio::spawn(
        history
            .clone()
            .record(Arc::clone(&server), stop_history.clone()),
    );
    let mut slots: Vec<Slot> = (0..settings.members)
        .map(|i| Slot::new(PREFIX, format!("m{i}"), dir.path(), &kubeconfig))
        .collect();
    for slot in &mut slots {
        slot.start()?;
    }

    let started = Instant::now();
    let chaos_end = started + Duration::from_secs(settings.secs);
    let driver = {
        let cms: Api<ConfigMap> = Api::namespaced(server.client().map_err(|e| e.to_string())?, NS);
        tokio::spawn(workload::drive(
            cms,
            settings.seed,
            NAMES,
            10..60,
            chaos_end,
        ))
    };

    // Chaos phase: kill the leader at seeded moments; halfway, make it lose its lease.
    let mut rng = fastrand::Rng::with_seed(settings.seed ^ 0x6c65_6164);
    let lease_loss_at = started + Duration::from_secs(settings.secs) / 2;
    let mut lease_lost = None;
    let mut kills = Vec::new();
    let mut next_kill = started + Duration::from_millis(rng.u64(3_000..8_000));
    while Instant::now() < chaos_end {
        restart_exited(&mut slots)?;
        let now = Instant::now();
        if lease_lost.is_none() && now >= lease_loss_at {
            lease_lost = Some(lose_lease(&server, &mut slots, settings.seed).await?);
            next_kill = Instant::now() + Duration::from_millis(rng.u64(3_000..8_000));
        } else if now >= next_kill {
            if let Some(victim) = leader_slot(&server, &slots) {
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
    server.stop_chaos();
    server.clear_faults();
    let faults = server.chaos_stats();
    let deadline = Instant::now() + QUIESCE_LIMIT;
    let mut gaps = convergence_gaps(&server, &mut slots)?;
    while !gaps.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        gaps = convergence_gaps(&server, &mut slots)?;
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
    if faults.total() == 0 {
        return Err("no fault injected".to_owned());
    }
    Ok(format!(
        "leaders {settings}: driver ops {driven_ok}/{driven} ok, {} reconciles by {} members {reconcilers:?}, \
         {} terms, leaders killed {kills:?}, {stepped_down} stepped down after losing its lease, \
         {} incarnations, converged {converged_after:?} after chaos; faults injected: {faults}",
        intervals.len(),
        reconcilers.len(),
        terms.len(),
        slots.iter().map(Slot::incarnations).sum::<u32>(),
    ))
}

/// Restarts members that exited on their own (a lost lease, or a failure).
fn restart_exited(slots: &mut [Slot]) -> Result<(), String> {
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
fn leader_slot(server: &ApiServer, slots: &[Slot]) -> Option<usize> {
    let holder = process::lease_holder(server)?;
    slots.iter().position(|s| s.identity() == holder)
}

/// Fails every Lease write until the leader steps down and exits; its identity.
async fn lose_lease(server: &ApiServer, slots: &mut [Slot], seed: u64) -> Result<String, String> {
    let deadline = Instant::now() + STEP_DOWN_LIMIT;
    let leader = loop {
        if let Some(i) = leader_slot(server, slots) {
            break i;
        }
        if Instant::now() >= deadline {
            return Err("nobody led when the lease was to be lost".to_owned());
        }
        restart_exited(slots)?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for verb in ["create", "update", "patch"] {
        server.fail_next(FailRule::random(verb, "leases", 500, 1.0, seed));
    }
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
    server.clear_faults();
    slots[leader].start()?;
    outcome
}

/// What still differs once chaos stopped: members' caches against the server, objects not
/// reconciled at their final version, work not done. Empty once converged.
fn convergence_gaps(server: &ApiServer, slots: &mut [Slot]) -> Result<Vec<String>, String> {
    restart_exited(slots)?;
    let cms: Vec<ConfigMap> = server.list();
    let secrets: Vec<Secret> = server.list();
    let want: BTreeMap<String, BTreeMap<String, String>> = [
        (
            "configmaps".to_owned(),
            workload::versions::<ConfigMap>(&cms),
        ),
        ("secrets".to_owned(), workload::versions::<Secret>(&secrets)),
    ]
    .into();
    let mut gaps = Vec::new();
    for slot in slots.iter() {
        match slot.snapshot::<member::Snapshot>() {
            Some(have) if have == want => {}
            have => gaps.push(format!(
                "{} cache {have:?} != server {want:?}",
                slot.identity()
            )),
        }
    }
    let intervals = all_intervals(slots.iter())?;
    for (controller, objects) in [("mirror", &want["configmaps"]), ("stamp", &want["secrets"])] {
        for (name, rv) in objects {
            let key = format!("{NS}/{name}");
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
