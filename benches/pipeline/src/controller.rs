//! `e2e_latency`: watch events paced at a fixed rate into a `controller-runtime` controller
//! (manager, `Controller::for_::<Pod>()`, one worker) whose reconciler records the time it starts;
//! the latency is that time minus the send time the server stamped into the event's object.
//! With `stages`, a second handler on the controller's informer records when the informer hands
//! each event to its handlers, which splits the latency into the watch path (decode, fifo,
//! cache, hand-out) and the controller's own (its handler, the work queue, the worker). The
//! floor under both is [`latency_floor`](crate::latency_floor)'s.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context as _, Result};
use controller_runtime::prelude::*;
use informer::ResourceEventHandler;
use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::fixtures::{Marker, SENT_ANNOTATION};
use crate::server::{RELEASE_PATH, ServerProcess, now_ns};

/// How long any one phase may take.
pub(crate) const PHASE_TIMEOUT: Duration = Duration::from_secs(120);

/// Figures of one latency run.
#[derive(Debug, Serialize)]
pub struct LatencyFigures {
    /// Events per second the server sent.
    pub rate: u32,
    /// Events sent.
    pub events: usize,
    /// Reconciles that found an event-stamped object (the latency samples).
    pub samples: usize,
    /// Median microseconds from the event leaving the server to reconcile start.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
    /// Largest sample, microseconds.
    pub max_us: f64,
    /// With `stages`: from the event leaving the server to the informer's handlers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to_handlers: Option<StageFigures>,
}

/// Latency quantiles of one stage of the path (or of the floor).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StageFigures {
    /// Samples.
    pub samples: usize,
    /// Median, microseconds.
    pub p50_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
}

impl StageFigures {
    /// The quantiles of `samples`.
    pub(crate) fn of(mut samples: Vec<f64>) -> Self {
        samples.sort_by(f64::total_cmp);
        Self {
            samples: samples.len(),
            p50_us: percentile(&samples, 0.50),
            p99_us: percentile(&samples, 0.99),
        }
    }
}

/// The microseconds from the send time stamped into `pod` to `now_ns`; `None` for an unstamped pod.
pub(crate) fn since_sent(pod: &Pod, now_ns: u128) -> Option<f64> {
    let sent = pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(SENT_ANNOTATION)?.parse::<u128>().ok())
        .filter(|&sent| sent > 0)?;
    Some(now_ns.saturating_sub(sent) as f64 / 1_000.0)
}

/// A handler that records when the informer hands out each stamped update.
#[derive(Clone, Default)]
struct HandOutProbe {
    latencies_us: Arc<Mutex<Vec<f64>>>,
}

impl ResourceEventHandler<Pod> for HandOutProbe {
    fn on_update(&self, _old: Arc<Pod>, new: Arc<Pod>) -> impl Future<Output = ()> + Send {
        if let Some(latency) = since_sent(&new, now_ns()) {
            self.latencies_us.lock().push(latency);
        }
        std::future::ready(())
    }
}

/// What the reconciler records.
#[derive(Debug, Default)]
struct Record {
    reconciles: AtomicUsize,
    latencies_us: Mutex<Vec<f64>>,
    /// Resource versions of the reconciled marker pod.
    marker_versions: Mutex<Vec<String>>,
}

/// A served pipeline-bench server process, a client of it, the pod whose changes are marked,
/// and a manager over it that a shutdown token stops.
pub(crate) struct ManagedServer {
    /// The server process (stopped when dropped).
    pub(crate) server: ServerProcess,
    /// A client of the server.
    pub(crate) client: kube::Client,
    /// The pod whose watch events carry their send time.
    pub(crate) marker: Marker,
    /// Stops the manager.
    pub(crate) shutdown: CancellationToken,
    /// A manager over the server that ignores process signals.
    pub(crate) manager: Arc<Manager>,
}

impl ManagedServer {
    /// Spawns a server with `objects` listed pods and `events` watch events paced at `rate`/s.
    pub(crate) fn spawn(objects: usize, events: usize, rate: u32) -> Result<Self> {
        let server = ServerProcess::spawn(objects, events, Some(rate))?;
        let client = server.client()?;
        let marker = server.info.watch_marker.clone();
        let shutdown = CancellationToken::new();
        let manager = Arc::new(
            Manager::builder(client.clone())
                .handle_signals(false)
                .shutdown_token(shutdown.clone())
                .build(),
        );
        Ok(Self {
            server,
            client,
            marker,
            shutdown,
            manager,
        })
    }
}

/// Runs the latency measurement over `objects` listed pods and `events` paced events.
/// With `stages`, the hand-out to the informer's handlers is measured too (see the module doc).
pub async fn run(objects: usize, events: usize, rate: u32, stages: bool) -> Result<LatencyFigures> {
    let ManagedServer {
        // Kept to the end: dropping it stops the server process.
        server: _server,
        client,
        marker,
        shutdown,
        manager,
    } = ManagedServer::spawn(objects, events, rate)?;
    let record = Arc::new(Record::default());
    let reconciler = reconciler_fn({
        let (record, marker) = (Arc::clone(&record), marker.clone());
        move |request: Request, ctx: Context<Pod>| {
            let started = now_ns();
            let (record, marker) = (Arc::clone(&record), marker.clone());
            async move {
                if let Some(pod) = ctx.get() {
                    if let Some(latency) = since_sent(&pod, started) {
                        record.latencies_us.lock().push(latency);
                    }
                    if request.name() == marker.name
                        && request.namespace() == Some(marker.namespace.as_str())
                    {
                        record
                            .marker_versions
                            .lock()
                            .extend(pod.metadata.resource_version.clone());
                    }
                }
                record.reconciles.fetch_add(1, Ordering::Relaxed);
                Ok::<_, ReconcileError>(Action::done())
            }
        }
    });
    Controller::new(&manager)
        .for_(Watch::of::<Pod>())
        .named("latency")
        .build(reconciler)?;
    let probe = HandOutProbe::default();
    if stages {
        for informer in manager.cache().informers::<Pod>()? {
            informer.add_event_handler(probe.clone())?;
        }
    }
    let running = start_synced(&manager, PHASE_TIMEOUT).await?;
    wait_until("the initial reconciles", PHASE_TIMEOUT, || {
        record.reconciles.load(Ordering::Relaxed) >= objects
    })
    .await?;
    ServerProcess::control(&client, RELEASE_PATH).await?;
    wait_until("the last event's reconcile", PHASE_TIMEOUT, || {
        record
            .marker_versions
            .lock()
            .contains(&marker.resource_version)
    })
    .await?;
    shutdown.cancel();
    running.await?.context("manager failed")?;

    let mut samples = std::mem::take(&mut *record.latencies_us.lock());
    samples.sort_by(f64::total_cmp);
    Ok(LatencyFigures {
        rate,
        events,
        samples: samples.len(),
        p50_us: percentile(&samples, 0.50),
        p99_us: percentile(&samples, 0.99),
        max_us: samples.last().copied().unwrap_or(0.0),
        to_handlers: stages
            .then(|| StageFigures::of(std::mem::take(&mut *probe.latencies_us.lock()))),
    })
}

/// Starts the manager on the runtime and waits, at most `limit`, until its Pod cache (typed or
/// compact, one informer cluster-wide) synced; the manager's task is returned.
pub(crate) async fn start_synced(
    manager: &Arc<Manager>,
    limit: Duration,
) -> Result<tokio::task::JoinHandle<Result<(), controller_runtime::manager::Error>>> {
    let pods = manager.cache().lister::<Pod>()?;
    let running = tokio::spawn({
        let manager = Arc::clone(manager);
        async move { manager.start().await }
    });
    tokio::time::timeout(limit, pods.synced())
        .await
        .context("sync timed out")?;
    Ok(running)
}

/// Polls `done` every millisecond until it holds; an error after `limit`.
pub(crate) async fn wait_until(
    what: &str,
    limit: Duration,
    mut done: impl FnMut() -> bool,
) -> Result<()> {
    tokio::time::timeout(limit, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .with_context(|| format!("timed out waiting for {what}"))
}

/// The `q` quantile of sorted samples (nearest rank); 0 when empty.
pub(crate) fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
