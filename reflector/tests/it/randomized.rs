//! 20 seeds of random creates, updates and deletes interleaved with random
//! watch drops, compactions, in-band 410s, bookmarks and failing requests; after quiescence the
//! store equals the server in every seed. (On a real server, behind the fault proxy: two seeds,
//! shorter pauses, no bookmarks.)

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use std::collections::BTreeSet;

use apiserver_sim::FailRule;
use common::*;
use indexer::Store;
use k8s_openapi::api::core::v1::ConfigMap;

const NAMES: usize = 12;

/// How the seeds run: on the simulator, 20 seeds with pauses of up to 3 s of virtual time; on
/// a real server, behind the fault proxy, 2 seeds with pauses of up to 300 ms, and without
/// bookmarks on demand (a bookmark says every event before it was sent, which the proxy can
/// only promise once the events of the test's writes have arrived; a random step does not
/// wait for them).
struct Scale {
    seeds: u64,
    pause: u64,
    bookmarks: bool,
}

fn scale(server: &TestCluster) -> Scale {
    match server.sim() {
        // REFLECTOR_SEEDS=n runs more seeds when hunting for a failure.
        Some(_) => Scale {
            seeds: std::env::var("REFLECTOR_SEEDS")
                .ok()
                .and_then(|n| n.parse().ok())
                .unwrap_or(20),
            pause: 3000,
            bookmarks: true,
        },
        None => Scale {
            seeds: 2,
            pause: 300,
            bookmarks: false,
        },
    }
}

/// Runs one seed on `server`; returns how many lists and watches the reflector made.
async fn run_seed(server: &TestCluster, seed: u64) -> (usize, usize) {
    let scale = scale(server);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut exists = BTreeSet::new();
    for i in 0..rng.usize(0..NAMES) {
        let name = format!("cm-{i}");
        server.put_own(&name, "initial").await.unwrap();
        exists.insert(name);
    }
    let lw = own_config_maps(server.client().unwrap());
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
    let random = |verb, probability| FailRule::random(verb, "configmaps", 500, probability, seed);
    server.inject(random("list", 0.1)).unwrap();
    server.inject(random("watch", 0.05)).unwrap();

    for step in 0..150 {
        let name = format!("cm-{}", rng.usize(0..NAMES));
        match rng.u32(0..100) {
            0..45 => {
                server.put_own(&name, &step.to_string()).await.unwrap();
                exists.insert(name);
            }
            45..65 => {
                if exists.remove(&name) {
                    server.remove(&name).await.unwrap();
                }
            }
            65..72 => server.drop_watches(),
            72..76 => {
                server.compact().await.unwrap();
            }
            76..79 => {
                let expired = FailRule::new("watch", "configmaps", 410, 1).in_band();
                server.inject(expired).unwrap();
            }
            79..81 if scale.bookmarks => {
                server.send_bookmarks().await.unwrap();
            }
            79..81 => {}
            _ => tokio::time::sleep(Duration::from_millis(rng.u64(0..scale.pause))).await,
        }
        if rng.bool() {
            tokio::time::sleep(Duration::from_millis(rng.u64(0..50))).await;
        }
    }

    server.clear_faults();
    own_converged(server, &*store).await;
    running.stop().await;
    if let Some(pipeline) = pipeline {
        pipeline.stop().await;
    }
    (lw.calls("list").len(), lw.calls("watch").len())
}

#[tokio::test(start_paused = true)]
async fn twenty_seeds_of_random_changes_and_faults_converge() {
    let (mut relisted, mut seed, mut seeds) = (0, 0, u64::MAX);
    while seed < seeds {
        let server = TestCluster::start_with_faults().await.unwrap();
        seeds = scale(&server).seeds;
        let (lists, watches) = run_seed(&server, seed).await;
        eprintln!("seed {seed}: {lists} lists, {watches} watches");
        if lists + watches > 2 {
            relisted += 1;
        }
        server.shutdown().await;
        seed += 1;
    }
    // The faults did force relists and rewatches in (nearly) every seed.
    assert!(
        relisted >= seeds * 9 / 10,
        "only {relisted} of {seeds} seeds saw a fault"
    );
}
