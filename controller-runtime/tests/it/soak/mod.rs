//! Soak: the whole stack against apiserver-sim in chaos mode.
//!
//! Two manager "slots" elect a leader on one Lease; each runs an informer factory and two
//! controllers: `mirror` (ConfigMap → a Secret of the same name with the same data, owned by
//! the ConfigMap: `owns(Watch::of::<Secret>())`) and `stamp` (Secret → an annotation listing
//! its data keys). A driver makes random creates, updates and deletes of ConfigMaps over HTTP while the
//! server injects faults; halfway through, the leading manager is shut down and replaced (a
//! guaranteed handover), and a manager that loses its lease is replaced too. Then the driver
//! and chaos stop, and the soak waits (with a deadline) for convergence and checks:
//!
//! - every running manager's caches equal the server (names and resourceVersions);
//! - every object on the server was last reconciled at its final resourceVersion (so after
//!   its last change), and every ConfigMap has its mirrored Secret;
//! - no key was reconciled by two workers at once (across both managers);
//! - every reconcile ran while its manager held the Lease on the server (start and end);
//! - no reconcile panicked, and no manager failed other than by losing its lease;
//! - reconciles stay within [`MAX_RECONCILES_PER_OP`] per driver operation (plus a fixed
//!   allowance): a write loop or a retry storm fails the run with a breakdown of where the
//!   reconciles went.
//!
//! `SOAK_SEED` (default [`DEFAULT_SEED`]), `SOAK_SECS` (chaos phase, default
//! [`DEFAULT_SECS`]) and `SOAK_PROFILE` (default `standard`) choose the run; every failure
//! message starts with them, so a failing run can be replayed.

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, ChaosConfig, ChaosProfile};
use controller_runtime::{
    controller::{Controller, ControllerHandle, Watch},
    leader_election::LeaderElectionConfig,
    manager::{Error, Manager},
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::Api;
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::workload::{self, versions};

mod journal;

use journal::{Journal, Mirror, Outcome, Stamp, Witness, breakdown, safety_violations};

/// Seed of the default (CI) run.
const DEFAULT_SEED: u64 = 20_261_121;
/// Length of the chaos phase of the default run, in seconds.
const DEFAULT_SECS: u64 = 15;
/// How long convergence may take once chaos stopped.
const QUIESCE_LIMIT: Duration = Duration::from_secs(40);
const NS: &str = "default";
const LEASE: &str = "soak-leader";
/// ConfigMap names the driver picks from.
const NAMES: usize = 10;
/// Reconciles a driver operation may cost on average, faults and handover included. A
/// successful write costs about four (`mirror` on the ConfigMap event, `stamp` on the new
/// Secret data, `mirror` and `stamp` again on the stamp's patch), a refused or failed one
/// none; retries after injected faults, relists and the handover's initial lists add their
/// share. Runs stay between 0.5 and 3 per operation; a write loop or a retry storm makes
/// tens, and fails the run.
const MAX_RECONCILES_PER_OP: f64 = 6.0;
/// Reconciles the bound always allows: every key listed again by a few relists and new
/// incarnations, before the driver made many operations.
const RECONCILE_ALLOWANCE: usize = 100;

/// The run's parameters, from the environment.
#[derive(Debug, Clone, Copy)]
struct Settings {
    seed: u64,
    secs: u64,
    profile: ChaosProfile,
}

impl Settings {
    fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let seed = var("SOAK_SEED").map_or(DEFAULT_SEED, |v| {
            v.trim()
                .parse()
                .expect("SOAK_SEED must be an unsigned integer")
        });
        let secs = var("SOAK_SECS").map_or(DEFAULT_SECS, |v| {
            v.trim()
                .parse()
                .expect("SOAK_SECS must be a whole number of seconds")
        });
        let profile = var("SOAK_PROFILE").map_or(ChaosProfile::Standard, |v| {
            v.parse().expect("SOAK_PROFILE must name a chaos profile")
        });
        Self {
            seed,
            secs,
            profile,
        }
    }
}

impl std::fmt::Display for Settings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SOAK_SEED={} SOAK_SECS={} SOAK_PROFILE={}",
            self.seed, self.secs, self.profile
        )
    }
}

/// One running incarnation of a slot's manager.
struct Incarnation {
    manager: Arc<Manager>,
    stop: CancellationToken,
}

/// A manager slot: replaced by a new incarnation whenever its manager stops, until the end.
#[derive(Clone)]
struct Slot {
    name: &'static str,
    current: Arc<Mutex<Option<Incarnation>>>,
    /// Every controller ever built, for their panic counters.
    controllers: Arc<Mutex<Vec<ControllerHandle>>>,
    /// Incarnations that lost their lease, and ones that failed otherwise.
    lost: Arc<Mutex<u32>>,
    failures: Arc<Mutex<Vec<String>>>,
}

impl Slot {
    fn new(name: &'static str) -> Self {
        Self {
            name,
            current: Arc::default(),
            controllers: Arc::default(),
            lost: Arc::default(),
            failures: Arc::default(),
        }
    }

    fn build(&self, generation: u32, server: &Arc<ApiServer>, journal: &Journal) -> Incarnation {
        let identity = format!("{}-{generation}", self.name);
        let election = LeaderElectionConfig::new(NS, LEASE)
            .identity(identity.clone())
            .lease_duration(Duration::from_secs(4))
            .renew_deadline(Duration::from_secs(3))
            .retry_period(Duration::from_millis(500));
        let stop = CancellationToken::new();
        let manager = Manager::builder(server.client().expect("client"))
            .handle_signals(false)
            .shutdown_token(stop.clone())
            .leader_election(election)
            .warm_up_before_leadership(true)
            .cache_sync_timeout(Duration::from_secs(60))
            .graceful_shutdown_timeout(Duration::from_secs(10))
            .build();
        let witness = Witness {
            journal: journal.clone(),
            member: identity,
            server: Arc::clone(server),
        };
        let mirror = Controller::new(&manager)
            .for_(Watch::of::<ConfigMap>())
            .owns(Watch::of::<Secret>())
            .named("mirror")
            .max_concurrent_reconciles(2)
            .build(Mirror(witness.clone()))
            .expect("mirror controller");
        let stamp = Controller::new(&manager)
            .for_(Watch::of::<Secret>())
            .named("stamp")
            .max_concurrent_reconciles(2)
            .build(Stamp(witness))
            .expect("stamp controller");
        self.controllers.lock().extend([mirror, stamp]);
        Incarnation {
            manager: Arc::new(manager),
            stop,
        }
    }

    /// Runs incarnation after incarnation until `end`.
    async fn run(self, server: Arc<ApiServer>, journal: Journal, end: CancellationToken) {
        let mut generation = 0;
        while !end.is_cancelled() {
            generation += 1;
            let inc = self.build(generation, &server, &journal);
            let manager = Arc::clone(&inc.manager);
            let stop = inc.stop.clone();
            *self.current.lock() = Some(inc);
            let start = manager.start();
            tokio::pin!(start);
            let outcome = tokio::select! {
                outcome = &mut start => outcome,
                () = end.cancelled() => {
                    // A graceful stop: the manager drains and releases the lease.
                    stop.cancel();
                    let _ = start.await;
                    return;
                }
            };
            match outcome {
                Ok(()) => {}
                Err(Error::LeadershipLost) => *self.lost.lock() += 1,
                Err(e) => self
                    .failures
                    .lock()
                    .push(format!("{}-{generation}: {e}", self.name)),
            }
        }
    }

    fn manager(&self) -> Option<Arc<Manager>> {
        self.current.lock().as_ref().map(|i| Arc::clone(&i.manager))
    }

    /// Shuts the current incarnation down (the slot then starts a new one).
    fn replace(&self) {
        if let Some(i) = self.current.lock().as_ref() {
            i.stop.cancel();
        }
    }
}

/// What the driver did.
#[derive(Debug, Default)]
struct DriverStats {
    attempted: u64,
    succeeded: u64,
}

/// Random creates, updates and deletes of ConfigMaps over HTTP until `until`.
async fn drive(client: kube::Client, seed: u64, until: Instant) -> DriverStats {
    let cms: Api<ConfigMap> = Api::namespaced(client, NS);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut stats = DriverStats::default();
    while Instant::now() < until {
        stats.attempted += 1;
        if workload::random_write(&cms, &mut rng, NAMES).await {
            stats.succeeded += 1;
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(10..60))).await;
    }
    stats
}

/// The properties that hold only once the system has converged; empty when they all do.
fn convergence_gaps(server: &ApiServer, slots: &[Slot], journal: &Journal) -> Vec<String> {
    let mut gaps = Vec::new();
    let cms: Vec<ConfigMap> = server.list();
    let secrets: Vec<Secret> = server.list();
    let want_cms = versions::<ConfigMap>(&cms);
    let want_secrets = versions::<Secret>(&secrets);
    for slot in slots {
        let Some(m) = slot.manager() else {
            gaps.push(format!("slot {} has no manager", slot.name));
            continue;
        };
        let have_cms = versions::<ConfigMap>(
            m.cache()
                .informers::<ConfigMap>()
                .unwrap()
                .remove(0)
                .indexer()
                .list(),
        );
        let have_secrets = versions::<Secret>(
            m.cache()
                .informers::<Secret>()
                .unwrap()
                .remove(0)
                .indexer()
                .list(),
        );
        if have_cms != want_cms {
            gaps.push(format!(
                "{} ConfigMap cache {have_cms:?} != server {want_cms:?}",
                slot.name
            ));
        }
        if have_secrets != want_secrets {
            gaps.push(format!(
                "{} Secret cache {have_secrets:?} != server {want_secrets:?}",
                slot.name
            ));
        }
    }
    let records = journal.0.lock().clone();
    let last_ok = |controller: &str, name: &str| {
        let key = format!("{NS}/{name}");
        records
            .iter()
            .filter(|r| r.controller == controller && r.key == key && r.outcome == Outcome::Ok)
            .max_by_key(|r| r.start)
            .map(|r| r.seen_rv.clone())
    };
    for (controller, objects) in [("mirror", &want_cms), ("stamp", &want_secrets)] {
        for (name, rv) in objects {
            let seen = last_ok(controller, name);
            if seen != Some(Some(rv.clone())) {
                let key = format!("{NS}/{name}");
                let history: Vec<String> = records
                    .iter()
                    .filter(|r| r.controller == controller && r.key == key)
                    .map(|r| {
                        format!(
                            "{} saw {:?} ({:?} {})",
                            r.member,
                            r.seen_rv,
                            r.outcome,
                            r.error.as_deref().unwrap_or("")
                        )
                    })
                    .collect();
                gaps.push(format!(
                    "{controller}: {name} is at {rv}, last reconciled at {seen:?}; reconciles: {history:?}"
                ));
            }
        }
    }
    gaps.extend(workload::unfinished(&cms, &secrets));
    gaps
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn soak_under_chaos() {
    if testkit::cluster::sim_only("chaos mode, configuration (limits and intervals)") {
        return;
    }
    let settings = Settings::from_env();
    let server = Arc::new(
        ApiServer::builder()
            .bookmark_interval(Duration::from_secs(1))
            .chaos(ChaosConfig {
                seed: settings.seed,
                profile: settings.profile,
            })
            .start()
            .await
            .unwrap_or_else(|e| panic!("{settings}: server: {e}")),
    );
    let journal = Journal::default();
    let end = CancellationToken::new();
    let slots = [Slot::new("a"), Slot::new("b")];
    let runs: Vec<_> = slots
        .iter()
        .map(|s| {
            tokio::spawn(
                s.clone()
                    .run(Arc::clone(&server), journal.clone(), end.clone()),
            )
        })
        .collect();

    // Chaos phase: the driver runs throughout; halfway, the leader is replaced.
    let started = Instant::now();
    let chaos_end = started + Duration::from_secs(settings.secs);
    let driver = tokio::spawn(drive(
        server.client().expect("client"),
        settings.seed,
        chaos_end,
    ));
    tokio::time::sleep_until(started + Duration::from_secs(settings.secs) / 2).await;
    // The chaos (or a starved CPU) may just have cost the leader its lease: then wait for the
    // next leader, at most until shortly before the chaos ends.
    let last_handover = chaos_end - Duration::from_secs(1);
    let leader = loop {
        let leading = slots
            .iter()
            .find(|s| s.manager().is_some_and(|m| m.is_leader()));
        if leading.is_some() || Instant::now() >= last_handover {
            break leading;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let handover = leader.map(|s| s.name);
    if let Some(slot) = leader {
        slot.replace();
    }
    let driven = driver
        .await
        .unwrap_or_else(|e| panic!("{settings}: driver: {e}"));

    // Quiesce: no more faults; wait for convergence.
    server.stop_chaos();
    let faults = server.chaos_stats();
    let deadline = Instant::now() + QUIESCE_LIMIT;
    let mut gaps = convergence_gaps(&server, &slots, &journal);
    while !gaps.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        gaps = convergence_gaps(&server, &slots, &journal);
    }
    let converged_after = Instant::now() - chaos_end;
    let lease = server
        .list::<Lease>()
        .into_iter()
        .find(|l| l.name_any() == LEASE)
        .and_then(|l| l.spec);
    let members: Vec<String> = slots
        .iter()
        .filter_map(|s| s.manager())
        .map(|m| {
            let e = m.elector();
            format!(
                "{:?} leader={:?}",
                e.map(|e| e.identity().to_owned()),
                e.map(|e| e.is_leader())
            )
        })
        .collect();
    end.cancel();
    for run in runs {
        run.await
            .unwrap_or_else(|e| panic!("{settings}: a manager slot panicked: {e}"));
    }

    let records = journal.0.lock().clone();
    let leaders: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.member.as_str()).collect();
    let lost: u32 = slots.iter().map(|s| *s.lost.lock()).sum();
    println!(
        "soak {settings}: driver ops {}/{} ok, {} reconciles by {leaders:?}, handover of {handover:?}, \
         {lost} leases lost, converged {converged_after:?} after chaos; faults injected: {faults}; \
         {:.2} reconciles per driver operation",
        driven.succeeded,
        driven.attempted,
        records.len(),
        records.len() as f64 / driven.attempted.max(1) as f64,
    );
    assert!(
        gaps.is_empty(),
        "{settings}: not converged: {gaps:#?}; managers {members:?}, lease {lease:?}"
    );
    let violations = safety_violations(&journal);
    assert!(violations.is_empty(), "{settings}: {violations:#?}");
    let bound = RECONCILE_ALLOWANCE + (MAX_RECONCILES_PER_OP * driven.attempted as f64) as usize;
    assert!(
        records.len() <= bound,
        "{settings}: reconcile amplification: {} reconciles for {} driver operations (at most \
         {bound} allowed: {MAX_RECONCILES_PER_OP} per operation + {RECONCILE_ALLOWANCE}); {}",
        records.len(),
        driven.attempted,
        breakdown(&records, started)
    );
    for slot in &slots {
        let failures = slot.failures.lock().clone();
        assert!(
            failures.is_empty(),
            "{settings}: manager failures {failures:?}"
        );
        for c in slot.controllers.lock().iter() {
            assert_eq!(
                c.stats().panics(),
                0,
                "{settings}: controller {} panicked",
                c.name()
            );
        }
    }
    assert!(
        handover.is_some(),
        "{settings}: nobody led between halfway and the end of the chaos"
    );
    assert!(
        leaders.len() >= 2,
        "{settings}: the handover moved no reconciles to another manager: {leaders:?}"
    );
    assert!(faults.total() > 0, "{settings}: no fault injected");
}
