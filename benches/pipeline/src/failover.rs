//! `failover`: how long a controller goes without reconciling when its leader dies, with a warm
//! standby (its controller built with `warm_up(true)`: informers listed and watching before it
//! leads) and with a cold one (the default: it lists once it leads), both in one run.
//!
//! Each round: a fresh apiserver-sim in this process holding N ConfigMaps; an old leader (a
//! manager electing on a Lease, one ConfigMap controller) that leads and has synced; a standby
//! (warm or cold) that sees it lead — the warm one synced too. Then the old leader dies, in one
//! of two ways: *stopped* (a graceful exit that releases the Lease, as on SIGTERM in a rolling
//! update) or *killed* (its task aborted: no release, the standby waits out the lease). The
//! figure is the time from the death to the start of the standby's first reconcile, split at the
//! moment it leads. The round waits until the new leader reconciled every one of the N objects
//! and fails if one is missing, if a standby reconciled before it led, or if a warm standby
//! made a list or watch request after the death.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use apiserver_sim::ApiServer;
use controller_runtime::leader_election::LeaderElectionConfig;
use controller_runtime::prelude::*;
use informer::SharedIndexInformer;
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use serde::Serialize;
use serde_json::json;
use tokio::task::JoinHandle;

use crate::controller::wait_until;

/// How long any one phase may take.
const PHASE_TIMEOUT: Duration = Duration::from_secs(300);
/// The Lease's timings: short, so that a killed leader's lease runs out soon (client-go's
/// rules hold: renew deadline > 1.2 × retry period, lease duration > renew deadline).
const LEASE_DURATION: Duration = Duration::from_secs(2);
const RENEW_DEADLINE: Duration = Duration::from_millis(1500);
const RETRY_PERIOD: Duration = Duration::from_millis(250);
/// The namespace of the objects and the Lease.
const NAMESPACE: &str = "default";

/// One round.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// `"warm"` or `"cold"`.
    pub standby: &'static str,
    /// `"stopped"` (the Lease released) or `"killed"` (waited out).
    pub death: &'static str,
    /// Milliseconds from the old leader's death to the new leader's first reconcile.
    pub to_first_reconcile_ms: f64,
    /// ... of which until the standby led.
    pub to_leading_ms: f64,
    /// ... and from leading to the first reconcile.
    pub leading_to_first_reconcile_ms: f64,
    /// Milliseconds from the death until the new leader reconciled all objects.
    pub to_all_reconciled_ms: f64,
    /// List and watch requests the standby's informers made after the death (a streaming
    /// list counts as a watch).
    pub requests_after_death: u64,
}

/// Figures of `failover`.
#[derive(Debug, Serialize)]
pub struct FailoverFigures {
    /// ConfigMaps on the server.
    pub objects: usize,
    /// Every round, in the order run.
    pub rounds: Vec<Round>,
    /// Warm over cold, death to first reconcile, for a stopped leader.
    pub stopped_ratio: f64,
    /// The same for a killed leader.
    pub killed_ratio: f64,
    /// Warm over cold from leading to the first reconcile (a killed leader).
    pub killed_after_leading_ratio: f64,
}

/// What a replica's reconciler records.
#[derive(Default)]
struct Record {
    leading: AtomicBool,
    acted_while_standby: AtomicBool,
    first: Mutex<Option<Instant>>,
    leading_since: Mutex<Option<Instant>>,
    keys: Mutex<HashSet<String>>,
    all_at: Mutex<Option<Instant>>,
}

/// A manager electing on the bench Lease with one ConfigMap controller.
struct Replica {
    manager: Arc<Manager>,
    running: JoinHandle<Result<(), controller_runtime::manager::Error>>,
    informers: Vec<Arc<SharedIndexInformer<ConfigMap>>>,
    record: Arc<Record>,
}

impl Replica {
    fn start(server: &ApiServer, id: &str, objects: usize, warm: bool) -> Result<Self> {
        let record = Arc::new(Record::default());
        let (started, stopped) = (Arc::clone(&record), Arc::clone(&record));
        let config = LeaderElectionConfig::new(NAMESPACE, "failover-bench")
            .identity(id)
            .lease_duration(LEASE_DURATION)
            .renew_deadline(RENEW_DEADLINE)
            .retry_period(RETRY_PERIOD)
            .release_on_cancel(true)
            .on_started_leading(move || {
                *started.leading_since.lock() = Some(Instant::now());
                started.leading.store(true, Ordering::SeqCst);
            })
            .on_stopped_leading(move || stopped.leading.store(false, Ordering::SeqCst));
        let manager = Arc::new(
            Manager::builder(server.client()?)
                .handle_signals(false)
                .leader_election(config)
                .build(),
        );
        let informers = manager.cache().informers::<ConfigMap>()?;
        let seen = Arc::clone(&record);
        Controller::new(&manager)
            .for_(Watch::of::<ConfigMap>())
            .named("failover")
            .warm_up(warm)
            .build(reconciler_fn(
                move |request: Request, _ctx: Context<ConfigMap>| {
                    let now = Instant::now();
                    if !seen.leading.load(Ordering::SeqCst) {
                        seen.acted_while_standby.store(true, Ordering::SeqCst);
                    }
                    seen.first.lock().get_or_insert(now);
                    let mut keys = seen.keys.lock();
                    keys.insert(request.name().to_owned());
                    if keys.len() == objects {
                        *seen.all_at.lock() = Some(Instant::now());
                    }
                    std::future::ready(Ok::<_, ReconcileError>(Action::done()))
                },
            ))?;
        let running = tokio::spawn({
            let manager = Arc::clone(&manager);
            async move { manager.start().await }
        });
        Ok(Self {
            manager,
            running,
            informers,
            record,
        })
    }

    /// List and watch requests of its informers (a streaming list is a watch).
    fn requests(&self) -> u64 {
        self.informers
            .iter()
            .map(|i| i.list_count() + i.watch_count())
            .sum()
    }

    fn synced(&self) -> bool {
        self.informers.iter().all(|i| i.has_synced())
    }
}

/// Rounds of every standby and death, over `objects` ConfigMaps.
pub async fn run(objects: usize) -> Result<FailoverFigures> {
    ensure!(objects >= 1, "at least one object");
    let mut rounds = Vec::new();
    for killed in [false, true] {
        for warm in [true, false] {
            rounds.push(run_one(objects, warm, killed).await?);
        }
    }
    let figure = |standby: &str, death: &str, of: fn(&Round) -> f64| {
        rounds
            .iter()
            .find(|round| round.standby == standby && round.death == death)
            .map(of)
            .unwrap_or(0.0)
    };
    let ratio = |death: &str, of: fn(&Round) -> f64| {
        figure("warm", death, of) / figure("cold", death, of).max(f64::MIN_POSITIVE)
    };
    Ok(FailoverFigures {
        objects,
        stopped_ratio: ratio("stopped", |round| round.to_first_reconcile_ms),
        killed_ratio: ratio("killed", |round| round.to_first_reconcile_ms),
        killed_after_leading_ratio: ratio("killed", |round| round.leading_to_first_reconcile_ms),
        rounds,
    })
}

/// Creates `objects` small ConfigMaps straight in the simulator's store.
fn seed(server: &ApiServer, objects: usize) -> Result<()> {
    server
        .create_many((0..objects).map(|index| {
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": { "name": format!("failover-{index:06}"), "namespace": NAMESPACE },
                "data": { "v": index.to_string() },
            })
        }))
        .context("creating the ConfigMaps")?;
    Ok(())
}

/// One round: a warm or cold standby; the old leader stopped or killed.
async fn run_one(objects: usize, warm: bool, killed: bool) -> Result<Round> {
    let server = ApiServer::start().await.context("starting apiserver-sim")?;
    seed(&server, objects)?;
    let old = Replica::start(&server, "old-leader", objects, false)?;
    wait_until("the old leader's sync", PHASE_TIMEOUT, || {
        old.manager.is_leader() && old.synced()
    })
    .await?;
    let standby = Replica::start(&server, "standby", objects, warm)?;
    wait_until("the standby seeing the leader", PHASE_TIMEOUT, || {
        standby
            .manager
            .elector()
            .and_then(|e| e.leader())
            .as_deref()
            == Some("old-leader")
            && (!warm || standby.synced())
    })
    .await?;
    let requests_before = standby.requests();
    ensure!(
        (requests_before > 0) == warm,
        "the {} standby had made {requests_before} list or watch requests before the death",
        if warm { "warm" } else { "cold" }
    );

    let died = if killed {
        old.running.abort();
        let _ = old.running.await;
        Instant::now()
    } else {
        old.manager.shutdown_handle().shutdown();
        old.running.await?.context("the old leader failed")?;
        Instant::now()
    };
    wait_until("the new leader's first reconcile", PHASE_TIMEOUT, || {
        standby.record.first.lock().is_some()
    })
    .await?;
    wait_until("every object reconciled", PHASE_TIMEOUT, || {
        standby.record.all_at.lock().is_some()
    })
    .await?;
    let requests_after_death = standby.requests() - requests_before;
    standby.manager.shutdown_handle().shutdown();
    standby.running.await?.context("the new leader failed")?;
    server.shutdown().await;

    let record = &standby.record;
    if record.acted_while_standby.load(Ordering::SeqCst) {
        bail!("the standby reconciled before it led");
    }
    if warm && requests_after_death != 0 {
        bail!(
            "the warm standby made {requests_after_death} list or watch requests after the death"
        );
    }
    let reconciled = record.keys.lock().len();
    ensure!(
        reconciled == objects,
        "the new leader reconciled {reconciled} of {objects} objects"
    );
    let (Some(first), Some(leading), Some(all)) = (
        *record.first.lock(),
        *record.leading_since.lock(),
        *record.all_at.lock(),
    ) else {
        bail!("no reconcile, no leadership or not every object");
    };
    let ms = |from: Instant, to: Instant| to.saturating_duration_since(from).as_secs_f64() * 1e3;
    Ok(Round {
        standby: if warm { "warm" } else { "cold" },
        death: if killed { "killed" } else { "stopped" },
        to_first_reconcile_ms: ms(died, first),
        to_leading_ms: ms(died, leading),
        leading_to_first_reconcile_ms: ms(leading, first),
        to_all_reconciled_ms: ms(died, all),
        requests_after_death,
    })
}

/// The human line of `failover`.
pub fn describe(figures: &FailoverFigures) -> String {
    let mut lines = vec![format!(
        "failover over {} ConfigMaps: death to the new leader's first reconcile, warm / cold = {:.3} (leader stopped, lease released), {:.3} (leader killed, lease waited out; {:.3} from leading on)",
        figures.objects,
        figures.stopped_ratio,
        figures.killed_ratio,
        figures.killed_after_leading_ratio
    )];
    for round in &figures.rounds {
        lines.push(format!(
            "  {} standby, leader {}: first reconcile {:.0} ms after the death (leading at {:.0} ms, then {:.0} ms), all reconciled at {:.0} ms, {} list or watch requests after the death",
            round.standby,
            round.death,
            round.to_first_reconcile_ms,
            round.to_leading_ms,
            round.leading_to_first_reconcile_ms,
            round.to_all_reconciled_ms,
            round.requests_after_death
        ));
    }
    lines.join("\n")
}
