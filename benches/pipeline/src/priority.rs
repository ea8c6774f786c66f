//! `priority_latency`: how long a live change waits for its reconcile while a controller with one
//! worker works through the keys of a large initial list, with the priority queue (the default)
//! and with the plain queue (`priority_queue(false)`), both run in this process, in turns.
//!
//! Each run: a fresh server with N listed pods and one paced watch event (a MODIFIED of the first
//! listed pod, stamped with its send time); a manager and `Controller::for_::<Pod>()` with one
//! worker whose reconciler reads the pod from the cache and records the time it starts. Once the
//! caches synced and the changed pod was reconciled as a listed pod (it is the first listed, so
//! the change is a new key rather than one folded into its waiting key), the server sends the
//! event; the latency is the reconcile's start minus the stamp. The run waits for every reconcile (N listed pods and the change) and fails if
//! one is missing or extra.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use controller_runtime::prelude::*;
use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use serde::Serialize;

use crate::controller::{ManagedServer, start_synced, wait_until};
use crate::fixtures::SENT_ANNOTATION;
use crate::server::{RELEASE_PATH, ServerProcess, now_ns};

/// How long any one phase may take.
const PHASE_TIMEOUT: Duration = Duration::from_secs(300);

/// The pace of the one event (it is sent within a millisecond of the release).
const EVENT_RATE: u32 = 1000;

/// One run with one queue.
#[derive(Debug, Clone, Serialize)]
pub struct Round {
    /// `"priority"` or `"plain"`.
    pub queue: &'static str,
    /// Milliseconds from the change leaving the server to the start of its reconcile.
    pub latency_ms: f64,
    /// Listed pods still to reconcile when the change was released.
    pub backlog_at_release: usize,
    /// Listed pods reconciled after the release was requested and before the change (also
    /// while the request and the event were on their way).
    pub reconciled_before_change: usize,
    /// Reconciles per second from the start of the first to the end of the last (listed pods
    /// and the change; the list and the sync before are not counted).
    pub reconciles_per_s: f64,
}

/// Figures of `priority`: every round, then medians and the ratio.
#[derive(Debug, Serialize)]
pub struct PriorityFigures {
    /// Pods in the initial list.
    pub objects: usize,
    /// Every run, in the order they ran.
    pub rounds: Vec<Round>,
    /// Median latency with the priority queue, ms.
    pub priority_latency_ms: f64,
    /// Median latency with the plain queue, ms.
    pub plain_latency_ms: f64,
    /// `plain_latency_ms / priority_latency_ms`.
    pub ratio: f64,
    /// Median reconciles per second with the priority queue.
    pub priority_reconciles_per_s: f64,
    /// Median reconciles per second with the plain queue.
    pub plain_reconciles_per_s: f64,
}

/// What the reconciler records.
#[derive(Debug, Default)]
struct Record {
    reconciles: AtomicUsize,
    /// When the first reconcile started and the last one ended.
    span: Mutex<Option<(Instant, Instant)>>,
    /// Listed pods reconciled (the change's reconcile not counted).
    listed: AtomicUsize,
    /// The change's latency in ms and the listed pods reconciled before it.
    change: Mutex<Option<(f64, usize)>>,
    /// The changed pod was reconciled as a listed pod (the release may come).
    changed_pod_listed: AtomicUsize,
}

/// `rounds` rounds of both queues over `objects` listed pods, priority queue first in each.
pub async fn run(objects: usize, rounds: usize) -> Result<PriorityFigures> {
    ensure!(objects >= 2, "at least two listed pods");
    let mut all = Vec::new();
    for _ in 0..rounds.max(1) {
        for prioritized in [true, false] {
            all.push(run_one(objects, prioritized).await?);
        }
    }
    let median_of = |queue: &str, figure: fn(&Round) -> f64| {
        let mut values: Vec<f64> = all
            .iter()
            .filter(|round| round.queue == queue)
            .map(figure)
            .collect();
        values.sort_by(f64::total_cmp);
        values.get(values.len() / 2).copied().unwrap_or(0.0)
    };
    let priority_latency_ms = median_of("priority", |round| round.latency_ms);
    let plain_latency_ms = median_of("plain", |round| round.latency_ms);
    Ok(PriorityFigures {
        objects,
        priority_latency_ms,
        plain_latency_ms,
        ratio: plain_latency_ms / priority_latency_ms.max(f64::MIN_POSITIVE),
        priority_reconciles_per_s: median_of("priority", |round| round.reconciles_per_s),
        plain_reconciles_per_s: median_of("plain", |round| round.reconciles_per_s),
        rounds: all,
    })
}

/// One run with the priority queue if `prioritized`, else the plain queue.
async fn run_one(objects: usize, prioritized: bool) -> Result<Round> {
    let ManagedServer {
        // Kept to the end: dropping it stops the server process.
        server: _server,
        client,
        marker,
        shutdown,
        manager,
    } = ManagedServer::spawn(objects, 1, EVENT_RATE)?;
    let record = Arc::new(Record::default());
    let reconciler = reconciler_fn({
        let (record, marker) = (Arc::clone(&record), marker.clone());
        move |request: Request, ctx: Context<Pod>| {
            let started = now_ns();
            let began = Instant::now();
            let record = Arc::clone(&record);
            let changed_pod = request.name() == marker.name
                && request.namespace() == Some(marker.namespace.as_str());
            async move {
                let sent = ctx.get().and_then(|pod| {
                    pod.metadata
                        .annotations
                        .as_ref()?
                        .get(SENT_ANNOTATION)?
                        .parse::<u128>()
                        .ok()
                });
                match sent.filter(|&sent| sent > 0) {
                    Some(sent) => {
                        let latency_ms = started.saturating_sub(sent) as f64 / 1e6;
                        let before = record.listed.load(Ordering::Relaxed);
                        *record.change.lock() = Some((latency_ms, before));
                    }
                    None => {
                        record.listed.fetch_add(1, Ordering::Relaxed);
                        if changed_pod {
                            record.changed_pod_listed.store(1, Ordering::Relaxed);
                        }
                    }
                }
                record.reconciles.fetch_add(1, Ordering::Relaxed);
                let mut span = record.span.lock();
                let first = span.map_or(began, |(first, _)| first);
                *span = Some((first, Instant::now()));
                Ok::<_, ReconcileError>(Action::done())
            }
        }
    });
    Controller::new(&manager)
        .for_(Watch::of::<Pod>())
        .named(if prioritized { "priority" } else { "plain" })
        .priority_queue(prioritized)
        .max_concurrent_reconciles(1)
        .build(reconciler)?;
    let running = start_synced(&manager, PHASE_TIMEOUT).await?;
    wait_until(
        "the changed pod's reconcile as a listed pod",
        PHASE_TIMEOUT,
        || record.changed_pod_listed.load(Ordering::Relaxed) == 1,
    )
    .await?;
    let backlog_at_release = objects - record.listed.load(Ordering::Relaxed);
    ServerProcess::control(&client, RELEASE_PATH).await?;
    wait_until("every reconcile", PHASE_TIMEOUT, || {
        record.change.lock().is_some() && record.listed.load(Ordering::Relaxed) >= objects
    })
    .await?;
    // Nothing more may come: one reconcile per listed pod and one for the change.
    tokio::time::sleep(Duration::from_millis(200)).await;
    shutdown.cancel();
    running.await?.context("manager failed")?;
    let reconciles = record.reconciles.load(Ordering::Relaxed);
    if reconciles != objects + 1 || record.listed.load(Ordering::Relaxed) != objects {
        bail!(
            "expected {} reconciles ({objects} listed pods and the change), got {reconciles}",
            objects + 1
        );
    }
    let Some((latency_ms, listed_before)) = *record.change.lock() else {
        bail!(
            "the change {}/{} was not reconciled",
            marker.namespace,
            marker.name
        );
    };
    let Some((first, last)) = *record.span.lock() else {
        bail!("no reconcile");
    };
    Ok(Round {
        queue: if prioritized { "priority" } else { "plain" },
        latency_ms,
        backlog_at_release,
        reconciled_before_change: listed_before.saturating_sub(objects - backlog_at_release),
        reconciles_per_s: reconciles as f64 / (last - first).as_secs_f64(),
    })
}

/// The human line of `priority`.
pub fn describe(figures: &PriorityFigures) -> String {
    format!(
        "priority_latency over {} listed pods, one worker: a live change waited {:.2} ms with \
         the priority queue, {:.0} ms with the plain queue ({:.0}×); {:.0} vs {:.0} reconciles/s",
        figures.objects,
        figures.priority_latency_ms,
        figures.plain_latency_ms,
        figures.ratio,
        figures.priority_reconciles_per_s,
        figures.plain_reconciles_per_s,
    )
}
