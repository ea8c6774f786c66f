//! `e2e_latency`: watch events paced at a fixed rate into a controller built from our informer, a
//! `workqueue::RateLimitingQueue` and one worker; the reconciler records when it starts, and the
//! latency is that time minus the send time the server stamped into the event's object.
//!
//! (`controller-runtime` is not committed yet; this is the same pipeline it wraps.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use informer::{ObjectKey, handler};
use k8s_openapi::api::core::v1::Pod;
use parking_lot::Mutex;
use serde::Serialize;
use workqueue::{RateLimitingQueue, default_controller_rate_limiter};

use crate::fixtures::{Marker, SENT_ANNOTATION};
use crate::measure::{Peer, RunOptions};
use crate::ours::Ours;
use crate::server::{RELEASE_PATH, ServerProcess, now_ns};

/// How long to wait for the queue to drain after the last event reached the cache.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);

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
}

/// Runs the latency measurement over `objects` listed pods and `events` paced events.
pub async fn run(objects: usize, events: usize, rate: u32) -> Result<LatencyFigures> {
    let server = ServerProcess::spawn(objects, events, Some(rate))?;
    let client = server.client()?;
    let options = RunOptions {
        objects,
        events,
        stream: false,
        strip_managed_fields: false,
        relist: false,
    };
    let informer = Ours::informer(client.clone(), &options)?;
    let queue: RateLimitingQueue<ObjectKey> =
        RateLimitingQueue::new(default_controller_rate_limiter());
    let enqueue = |queue: &RateLimitingQueue<ObjectKey>, pod: &Pod| {
        if let Ok(key) = indexer::key_of(pod) {
            queue.add(key);
        }
    };
    informer.add_event_handler(
        handler()
            .named("latency")
            .on_add({
                let queue = queue.clone();
                move |pod: Arc<Pod>, _| enqueue(&queue, &pod)
            })
            .on_update({
                let queue = queue.clone();
                move |_, pod: Arc<Pod>| enqueue(&queue, &pod)
            }),
    )?;
    let ours = Ours::run(Arc::clone(&informer));

    let samples = Arc::new(Mutex::new(Vec::with_capacity(events)));
    let reconciled = Arc::new(AtomicUsize::new(0));
    let worker = tokio::spawn({
        let (queue, informer, samples, reconciled) = (
            queue.clone(),
            Arc::clone(&informer),
            Arc::clone(&samples),
            Arc::clone(&reconciled),
        );
        async move {
            while let Some(key) = queue.get().await {
                let started = now_ns();
                let sent = informer
                    .indexer()
                    .get_by_key(&key)
                    .and_then(|pod| {
                        pod.metadata
                            .annotations
                            .as_ref()?
                            .get(SENT_ANNOTATION)?
                            .parse::<u128>()
                            .ok()
                    })
                    .filter(|&sent| sent > 0);
                if let Some(sent) = sent {
                    samples
                        .lock()
                        .push(started.saturating_sub(sent) as f64 / 1_000.0);
                }
                reconciled.fetch_add(1, Ordering::Relaxed);
                queue.forget(&key);
                queue.done(&key);
            }
        }
    });

    ours.synced().await;
    wait_until("initial reconciles", || {
        reconciled.load(Ordering::Relaxed) >= objects && queue.is_empty()
    })
    .await?;
    ServerProcess::control(&client, RELEASE_PATH).await?;
    let marker: Marker = server.info.watch_marker.clone();
    wait_until("the last event", || {
        ours.resource_version(&marker).ok().flatten().as_deref()
            == Some(marker.resource_version.as_str())
    })
    .await?;
    wait_until("the queue to drain", || queue.is_empty()).await?;
    tokio::time::sleep(Duration::from_millis(50)).await;
    queue.shut_down();
    let _ = worker.await;
    ours.stop().await;

    let mut samples = std::mem::take(&mut *samples.lock());
    samples.sort_by(f64::total_cmp);
    Ok(LatencyFigures {
        rate,
        events,
        samples: samples.len(),
        p50_us: percentile(&samples, 0.50),
        p99_us: percentile(&samples, 0.99),
        max_us: samples.last().copied().unwrap_or(0.0),
    })
}

async fn wait_until(what: &str, mut done: impl FnMut() -> bool) -> Result<()> {
    tokio::time::timeout(DRAIN_TIMEOUT, async {
        while !done() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    })
    .await
    .with_context(|| format!("timed out waiting for {what}"))
}

/// The `q` quantile of sorted samples (nearest rank); 0 when empty.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}
