//! 20 seeds of random creates, updates and deletes interleaved with random
//! watch drops, compactions, in-band 410s and failing requests; after quiescence the store
//! equals the server in every seed.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use common::*;
use indexer::Store;
use k8s_openapi::api::core::v1::ConfigMap;

const NAMES: usize = 12;

/// Runs one seed; returns how many lists and watches the reflector made.
async fn run_seed(seed: u64) -> (usize, usize) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let server = ApiServer::start().await.unwrap();
    for i in 0..rng.usize(0..NAMES) {
        put(&server, &format!("cm-{i}"), "initial");
    }
    let lw = config_maps(server.client().unwrap());
    // Half the seeds write into a plain cache, half through a DeltaFifo into a cache.
    let (store, sink, pipeline): (Arc<dyn Store<ConfigMap>>, Arc<dyn Store<ConfigMap>>, _) =
        if seed % 4 < 2 {
            let store = Arc::new(cache());
            (store.clone(), store, None)
        } else {
            let pipeline = Pipeline::start();
            let cache: Arc<dyn Store<ConfigMap>> = Arc::new(pipeline.cache.clone());
            (cache, Arc::new(pipeline.fifo.clone()), Some(pipeline))
        };
    let options = reflector::ReflectorOptions::default()
        .jitter_seed(seed)
        .page_size(rng.u32(0..5))
        .streaming_list(seed % 2 == 1);
    let running = spawn(lw.clone(), sink, options);
    // Some lists and watches fail at random, reproducibly for the seed.
    server.fail_next(FailRule::random("list", "configmaps", 500, 0.1, seed));
    server.fail_next(FailRule::random("watch", "configmaps", 500, 0.05, seed));

    for step in 0..150 {
        let name = format!("cm-{}", rng.usize(0..NAMES));
        match rng.u32(0..100) {
            0..45 => {
                put(&server, &name, &step.to_string());
            }
            45..65 => {
                if server_state(&server).contains_key(&name) {
                    remove(&server, &name);
                }
            }
            65..72 => server.drop_watches(),
            72..76 => {
                server.compact();
            }
            76..79 => server.fail_next(FailRule::new("watch", "configmaps", 410, 1).in_band()),
            79..81 => server.send_bookmarks(),
            _ => tokio::time::sleep(Duration::from_millis(rng.u64(0..3000))).await,
        }
        if rng.bool() {
            tokio::time::sleep(Duration::from_millis(rng.u64(0..50))).await;
        }
    }

    server.clear_faults();
    converged(&server, &*store).await;
    running.stop().await;
    if let Some(pipeline) = pipeline {
        pipeline.stop().await;
    }
    server.shutdown().await;
    (lw.calls("list").len(), lw.calls("watch").len())
}

#[tokio::test(start_paused = true)]
async fn twenty_seeds_of_random_changes_and_faults_converge() {
    if testkit::cluster::sim_only(
        "virtual time (pauses of up to 3 s between the random steps of 20 seeds)",
    ) {
        return;
    }
    // REFLECTOR_SEEDS=n runs more seeds when hunting for a failure.
    let seeds = std::env::var("REFLECTOR_SEEDS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(20u64);
    let mut relisted = 0;
    for seed in 0..seeds {
        let (lists, watches) = run_seed(seed).await;
        eprintln!("seed {seed}: {lists} lists, {watches} watches");
        if lists + watches > 2 {
            relisted += 1;
        }
    }
    // The faults did force relists and rewatches in (nearly) every seed.
    assert!(
        relisted >= seeds * 9 / 10,
        "only {relisted} seeds saw a fault"
    );
}
