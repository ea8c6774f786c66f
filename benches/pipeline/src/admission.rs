//! `pipeline-bench admission`: what admission webhooks add to each write. ConfigMaps are
//! created through the in-process `apiserver-sim` with no webhook configured, then with a
//! validating and a mutating webhook (controller-runtime's `WebhookServer`, in the same
//! process) that the simulator calls over HTTPS for every create; rounds alternate the two so
//! that both see the same machine. Every write must succeed, every webhook write must have been
//! validated and defaulted exactly once (and carry the defaulted label), no baseline write may
//! reach a webhook.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, ensure};
use apiserver_sim::ApiServer;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client};
use parking_lot::Mutex;
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::admission_server::{BenchWebhooks, CONFIGURATION_NAME, DEFAULTED_LABEL};
use crate::controller::percentile;

/// Writes of each mode before measuring (connections, allocator, caches).
const WARM_UP_WRITES: usize = 200;
/// How long one mode of one round may take.
const ROUND_TIMEOUT: Duration = Duration::from_secs(600);

/// The figures of one mode.
#[derive(Debug, Serialize)]
pub struct ModeFigures {
    /// Successful writes measured (every write of every round).
    pub writes: usize,
    /// Writes per second: writes ÷ the summed wall time of the mode's rounds.
    pub writes_per_s: f64,
    /// Median latency of one create as the client sees it, microseconds.
    pub median_us: f64,
    /// 99th percentile, microseconds.
    pub p99_us: f64,
}

/// The figures of a run.
#[derive(Debug, Serialize)]
pub struct AdmissionFigures {
    /// Writes per mode per round.
    pub writes_per_round: usize,
    /// Rounds (each measures both modes).
    pub rounds: usize,
    /// Creates in flight at once.
    pub concurrency: usize,
    /// No webhook configured.
    pub without_webhooks: ModeFigures,
    /// A validating and a mutating webhook configured.
    pub with_webhooks: ModeFigures,
    /// Admission calls answered while measuring (validating + mutating).
    pub admission_calls: u64,
    /// Admission round trips per second: calls ÷ the webhook mode's wall time.
    pub admission_round_trips_per_s: f64,
    /// Median latency added per write, microseconds.
    pub added_median_us: f64,
    /// p99 latency added per write, microseconds.
    pub added_p99_us: f64,
}

/// One measured pass of one mode.
struct Pass {
    latencies_us: Vec<f64>,
    elapsed: Duration,
}

/// Runs `rounds` rounds of `writes` creates per mode, `concurrency` at a time.
pub async fn run(writes: usize, rounds: usize, concurrency: usize) -> Result<AdmissionFigures> {
    ensure!(
        writes > 0 && rounds > 0 && concurrency > 0,
        "nothing to measure"
    );
    let server = ApiServer::start().await?;
    let client = server.client()?;
    let shutdown = CancellationToken::new();
    let _stop_webhooks = shutdown.clone().drop_guard();
    let webhooks = BenchWebhooks::start(shutdown.clone()).await?;

    // Warm both paths, then check that the webhooks are off again.
    set_webhooks(&client, &webhooks, true).await?;
    write_pass(&client, "warm-with", WARM_UP_WRITES, concurrency, true).await?;
    set_webhooks(&client, &webhooks, false).await?;
    write_pass(&client, "warm-without", WARM_UP_WRITES, concurrency, false).await?;

    let mut without = Vec::new();
    let mut with = Vec::new();
    let before = webhooks.calls.snapshot();
    for round in 0..rounds {
        // Alternate which mode goes first, so that neither always runs on a fuller store.
        let order = if round % 2 == 0 {
            [false, true]
        } else {
            [true, false]
        };
        for enabled in order {
            set_webhooks(&client, &webhooks, enabled).await?;
            let calls = webhooks.calls.snapshot();
            let prefix = format!("{}-{round}", if enabled { "with" } else { "without" });
            let pass = tokio::time::timeout(
                ROUND_TIMEOUT,
                write_pass(&client, &prefix, writes, concurrency, enabled),
            )
            .await
            .with_context(|| format!("round {round} timed out"))??;
            let (validated, defaulted) = webhooks.calls.snapshot();
            let expected = if enabled { writes as u64 } else { 0 };
            ensure!(
                (validated - calls.0, defaulted - calls.1) == (expected, expected),
                "{prefix}: {} validations and {} defaultings for {writes} writes",
                validated - calls.0,
                defaulted - calls.1
            );
            if enabled { &mut with } else { &mut without }.push(pass);
        }
    }
    set_webhooks(&client, &webhooks, false).await?;
    let after = webhooks.calls.snapshot();
    let admission_calls = (after.0 - before.0) + (after.1 - before.1);
    ensure!(
        admission_calls == 2 * (writes * rounds) as u64,
        "{admission_calls} admission calls for {} webhook writes",
        writes * rounds
    );
    server.shutdown().await;

    let (without, with) = (figures(without), figures(with));
    let with_elapsed = with.1;
    let (without, with) = (without.0, with.0);
    Ok(AdmissionFigures {
        writes_per_round: writes,
        rounds,
        concurrency,
        admission_calls,
        admission_round_trips_per_s: admission_calls as f64 / with_elapsed.as_secs_f64(),
        added_median_us: with.median_us - without.median_us,
        added_p99_us: with.p99_us - without.p99_us,
        without_webhooks: without,
        with_webhooks: with,
    })
}

/// The human line of `figures`.
pub fn describe(figures: &AdmissionFigures) -> String {
    let (without, with) = (&figures.without_webhooks, &figures.with_webhooks);
    format!(
        "admission at concurrency {}: without webhooks {:.0} writes/s (median {:.0} µs, p99 {:.0} µs); \
         with a validating and a mutating webhook {:.0} writes/s (median {:.0} µs, p99 {:.0} µs), \
         {:.0} admission round trips/s; added per write: median {:.0} µs, p99 {:.0} µs",
        figures.concurrency,
        without.writes_per_s,
        without.median_us,
        without.p99_us,
        with.writes_per_s,
        with.median_us,
        with.p99_us,
        figures.admission_round_trips_per_s,
        figures.added_median_us,
        figures.added_p99_us
    )
}

/// Pools the passes of one mode; also returns their summed wall time.
fn figures(passes: Vec<Pass>) -> (ModeFigures, Duration) {
    let elapsed: Duration = passes.iter().map(|pass| pass.elapsed).sum();
    let mut latencies: Vec<f64> = passes
        .into_iter()
        .flat_map(|pass| pass.latencies_us)
        .collect();
    latencies.sort_by(f64::total_cmp);
    let figures = ModeFigures {
        writes: latencies.len(),
        writes_per_s: latencies.len() as f64 / elapsed.as_secs_f64(),
        median_us: percentile(&latencies, 0.50),
        p99_us: percentile(&latencies, 0.99),
    };
    (figures, elapsed)
}

/// Creates (`enabled`) or deletes both webhook configurations; either is a no-op when already
/// done.
async fn set_webhooks(client: &Client, webhooks: &BenchWebhooks, enabled: bool) -> Result<()> {
    let validating: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
    let mutating: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
    let outcomes = if enabled {
        let create = PostParams::default();
        [
            validating
                .create(&create, &webhooks.validating)
                .await
                .map(drop),
            mutating.create(&create, &webhooks.mutating).await.map(drop),
        ]
    } else {
        let delete = DeleteParams::default();
        [
            validating
                .delete(CONFIGURATION_NAME, &delete)
                .await
                .map(drop),
            mutating.delete(CONFIGURATION_NAME, &delete).await.map(drop),
        ]
    };
    let done_already = if enabled { 409 } else { 404 };
    for outcome in outcomes {
        match outcome {
            Ok(()) => {}
            Err(kube::Error::Api(status)) if status.code == done_already => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

/// Creates `writes` ConfigMaps named `<prefix>-<i>`, `concurrency` at a time, timing each;
/// checks that each came back defaulted exactly when the webhooks are `enabled`.
async fn write_pass(
    client: &Client,
    prefix: &str,
    writes: usize,
    concurrency: usize,
    enabled: bool,
) -> Result<Pass> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let next = Arc::new(AtomicUsize::new(0));
    let latencies = Arc::new(Mutex::new(Vec::with_capacity(writes)));
    let started = Instant::now();
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency.min(writes) {
        let (api, next, latencies) = (api.clone(), Arc::clone(&next), Arc::clone(&latencies));
        let prefix = prefix.to_owned();
        workers.spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= writes {
                    return Ok::<(), anyhow::Error>(());
                }
                let config = config_map(&format!("{prefix}-{i}"));
                let sent = Instant::now();
                let created = api.create(&PostParams::default(), &config).await?;
                let latency = sent.elapsed();
                let defaulted = created
                    .metadata
                    .labels
                    .as_ref()
                    .is_some_and(|labels| labels.contains_key(DEFAULTED_LABEL));
                ensure!(
                    defaulted == enabled,
                    "{prefix}-{i}: defaulted {defaulted}, webhooks on {enabled}"
                );
                latencies.lock().push(latency.as_secs_f64() * 1e6);
            }
        });
    }
    while let Some(result) = workers.join_next().await {
        result??;
    }
    let elapsed = started.elapsed();
    let latencies_us = std::mem::take(&mut *latencies.lock());
    ensure!(
        latencies_us.len() == writes,
        "{prefix}: {} of {writes} writes succeeded",
        latencies_us.len()
    );
    Ok(Pass {
        latencies_us,
        elapsed,
    })
}

/// A small ConfigMap (two keys, one label).
fn config_map(name: &str) -> ConfigMap {
    let mut config = ConfigMap::default();
    config.metadata.name = Some(name.to_owned());
    config.metadata.labels = Some([("app".to_owned(), "bench".to_owned())].into());
    config.data = Some(
        [
            ("mode".to_owned(), "fast".to_owned()),
            ("level".to_owned(), "info".to_owned()),
        ]
        .into(),
    );
    config
}
