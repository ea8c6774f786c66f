//! 20 seeds of random creates, updates and deletes over 2 000 objects while the
//! server drops watches, compacts its history while the informer is disconnected (after a
//! change it missed) and fails 10 % of lists; after quiescence the
//! indexer and a handler's own map both equal the server's state. (On a real server, behind
//! the fault proxy: two seeds of 500 steps over 200 objects.) On both fifos, and on compact
//! objects.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use informer::{ApiListerWatcher, FifoKind, ReflectorOptions, SharedIndexInformer};
use kube::Api;
use testkit::fault::InjectFaults;

/// How much chaos the seeds make.
#[derive(Debug, Clone, Copy)]
struct Scale {
    seeds: u64,
    objects: usize,
    steps: usize,
    /// The longest pause between two steps.
    pause: Duration,
}

/// On the simulator, with virtual time, all of it; on a real server, where every write is a
/// request and every pause real, two seeds of a third of the steps over a tenth of the objects.
fn scale(server: &TestCluster) -> Scale {
    match server.sim() {
        Some(_) => Scale {
            seeds: 20,
            objects: 2_000,
            steps: 1_500,
            pause: Duration::from_secs(2),
        },
        None => Scale {
            seeds: 2,
            objects: 200,
            steps: 500,
            pause: Duration::from_millis(200),
        },
    }
}

/// Runs one seed on `server`; returns how many list requests the informer made, and how many
/// one list of the initial objects takes.
async fn run_seed<O: TestObject>(server: &TestCluster, seed: u64, kind: FifoKind) -> (u64, u64) {
    let scale = scale(server);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut exists = vec![false; scale.objects];
    for (i, exists) in exists.iter_mut().enumerate() {
        if rng.bool() {
            server
                .create(&own_cm(&format!("cm-{i}"), "initial"))
                .await
                .unwrap();
            *exists = true;
        }
    }
    let initial = exists.iter().filter(|exists| **exists).count() as u64;
    let page_size = rng.u32(100..1_000);
    let api: Api<O> = Api::namespaced(server.client().unwrap(), ns());
    let own = ApiListerWatcher::new(api).labels(OWN_SELECTOR);
    let informer = Arc::new(
        SharedIndexInformer::builder(Arc::new(own))
            .fifo(kind)
            .reflector_options(
                // Paged lists: their failures are injected, and relists are counted by them.
                ReflectorOptions::default()
                    .streaming_list(false)
                    .jitter_seed(seed)
                    .page_size(page_size),
            )
            .build(),
    );
    O::prepare(&informer);
    let handler = Recorder::new("map");
    informer.add_event_handler(handler.clone()).unwrap();
    server.reset_request_counts();
    server
        .inject(FailRule::random("list", "configmaps", 500, 0.1, seed))
        .unwrap();
    let running = spawn(&informer);

    for step in 0..scale.steps {
        let i = rng.usize(0..scale.objects);
        let name = format!("cm-{i}");
        match rng.u32(0..100) {
            0..30 => {
                server.put_own(&name, &step.to_string()).await.unwrap();
                exists[i] = true;
            }
            30..60 if exists[i] => {
                server.put_own(&name, &step.to_string()).await.unwrap();
            }
            60..80 if exists[i] => {
                server.remove(&name).await.unwrap();
                exists[i] = false;
            }
            80..82 => server.drop_watches(),
            82..83 => {
                // A change and a compaction while the informer is disconnected: its rewatch,
                // from before both, expires.
                let held = server.hold_watches();
                server.drop_watches();
                server.put_own(&name, &step.to_string()).await.unwrap();
                exists[i] = true;
                server.compact().await.unwrap();
                drop(held);
            }
            83..85 => {
                let pause = rng.u64(0..scale.pause.as_millis() as u64);
                tokio::time::sleep(Duration::from_millis(pause)).await;
            }
            _ => {}
        }
        if step % 16 == 0 {
            tokio::task::yield_now().await;
        }
    }

    // Quiescence: no more changes. Faults stay until the informer is converging on its own.
    // (The lists the test makes below go through a real server's fault proxy too: the
    // informer's are counted before.)
    let lists = server.request_count("list", "configmaps");
    let expected = server.own_state().await.unwrap();
    eventually("the indexer converged", Duration::from_secs(600), || {
        informer.cache_size() == expected.len() && cache_state(&informer) == expected
    })
    .await;
    eventually("the handler converged", Duration::from_secs(600), || {
        handler.state() == expected
    })
    .await;
    running.stop().await;
    server.clear_faults();
    (lists, initial.div_ceil(u64::from(page_size)))
}

async fn twenty_seeds_of_random_changes_and_faults_converge<O: TestObject>(kind: FifoKind) {
    let (mut relisted, mut seed, mut seeds) = (0, 0, u64::MAX);
    while seed < seeds {
        let server = TestCluster::start_with_faults().await.unwrap();
        seeds = scale(&server).seeds;
        let (lists, pages_of_one_list) = run_seed::<O>(&server, seed, kind).await;
        if lists > pages_of_one_list {
            relisted += 1;
        }
        server.shutdown().await;
        seed += 1;
    }
    // Compactions and failing lists forced relists in (nearly) every seed.
    assert!(
        relisted >= seeds * 9 / 10,
        "only {relisted} of {seeds} seeds relisted"
    );
}

on_both_fifos_and_compact!(
    twenty_seeds_of_random_changes_and_faults_converge,
    start_paused = true
);
