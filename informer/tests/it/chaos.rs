//! 20 seeds of random creates, updates and deletes over 2 000 objects while the
//! server drops watches, compacts its history and fails 10 % of lists; after quiescence the
//! indexer and a handler's own map both equal the server's state.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use common::*;
use informer::{FifoKind, ReflectorOptions, SharedIndexInformer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

const OBJECTS: usize = 2_000;
const STEPS: usize = 1_500;

/// Runs one seed; returns how many list requests the informer made, and how many one list of
/// the initial objects takes.
async fn run_seed(seed: u64, kind: FifoKind) -> (u64, u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let server = ApiServer::start().await.unwrap();
    let mut exists = vec![false; OBJECTS];
    for (i, exists) in exists.iter_mut().enumerate() {
        if rng.bool() {
            server.create(&cm(&format!("cm-{i}"), "initial")).unwrap();
            *exists = true;
        }
    }
    let initial = exists.iter().filter(|exists| **exists).count() as u64;
    let page_size = rng.u32(100..1_000);
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), NS);
    let informer = Arc::new(
        SharedIndexInformer::for_api(api)
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
    let handler = Recorder::new("map");
    informer.add_event_handler(handler.clone()).unwrap();
    server.fail_next(FailRule::random("list", "configmaps", 500, 0.1, seed));
    let running = spawn(&informer);

    for step in 0..STEPS {
        let i = rng.usize(0..OBJECTS);
        let name = format!("cm-{i}");
        match rng.u32(0..100) {
            0..30 => {
                put(&server, &name, &step.to_string());
                exists[i] = true;
            }
            30..60 if exists[i] => {
                put(&server, &name, &step.to_string());
            }
            60..80 if exists[i] => {
                remove(&server, &name);
                exists[i] = false;
            }
            80..82 => server.drop_watches(),
            82..83 => {
                server.compact();
            }
            83..85 => tokio::time::sleep(Duration::from_millis(rng.u64(0..2_000))).await,
            _ => {}
        }
        if step % 16 == 0 {
            tokio::task::yield_now().await;
        }
    }

    // Quiescence: no more changes. Faults stay until the informer is converging on its own.
    let expected = server_state(&server);
    eventually("the indexer converged", Duration::from_secs(600), || {
        informer.cache_size() == expected.len() && cache_state(&informer) == expected
    })
    .await;
    eventually("the handler converged", Duration::from_secs(600), || {
        handler.state() == expected
    })
    .await;
    let lists = server.request_count("list", "configmaps");
    running.stop().await;
    server.shutdown().await;
    (lists, initial.div_ceil(u64::from(page_size)))
}

async fn twenty_seeds_of_random_changes_and_faults_converge(kind: FifoKind) {
    if testkit::cluster::sim_only("virtual time, fault injection") {
        return;
    }
    let mut relisted = 0;
    for seed in 0..20 {
        let (lists, pages_of_one_list) = run_seed(seed, kind).await;
        if lists > pages_of_one_list {
            relisted += 1;
        }
    }
    // Compactions and failing lists forced relists in (nearly) every seed.
    assert!(relisted >= 18, "only {relisted} seeds relisted");
}

on_both_fifos!(
    twenty_seeds_of_random_changes_and_faults_converge,
    start_paused = true
);
