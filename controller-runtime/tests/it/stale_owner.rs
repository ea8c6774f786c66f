//! An owner deleted on the server while the controller's cache of it is stale: the soak's
//! `mirror` must not recreate the child the garbage collector just removed.
//!
//! This is the write loop behind the soak's reconcile amplification (one harsh run made
//! 21,481 reconciles for about 500 driver operations): the ConfigMap and Secret informers
//! watch separately, so under faults the ConfigMap cache can lag by seconds. A ConfigMap
//! deleted meanwhile still looked alive to `mirror`; the garbage collector deleted its Secret
//! (owner gone), the Secret's delete event reconciled the ConfigMap, `mirror` created the
//! Secret again, and so on at the server's speed (about 200 reconciles a second in a debug
//! build) until the ConfigMap cache caught up. `mirror` now confirms the owner with a live
//! read before it creates.
//!
//! Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster through
//! a fault proxy (a whole cluster's garbage collector removes the Secret there; a bare API
//! server has none, and the test is skipped there with a notice).

use crate::{common, workload};

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use controller_runtime::controller::{Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use testkit::fault::InjectFaults;

// Generous: on a loaded two-core machine running the whole suite, the garbage collector, the
// Secret's delete event and the reconcile it triggers took longer than 10 s once.
const LIMIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_collected_while_its_owner_is_only_in_a_stale_cache_stays_deleted() {
    let server = TestCluster::start_with_faults().await.unwrap();
    // The garbage collector removes the child: a bare API server has none.
    if !server.collects_garbage().await.unwrap() {
        testenv::skip_on_existing_cluster("garbage collector (it removes the child)");
        server.shutdown().await;
        return;
    }
    let manager = Arc::new(manager(&server).build());
    let mirror =
        Controller::new(&manager)
            .for_(Watch::of::<ConfigMap>().predicate(own_only()))
            .owns(Watch::of::<Secret>())
            .named("mirror")
            .build(reconciler_fn(
                |req: Request, ctx: Context<ConfigMap>| async move {
                    workload::mirror(&req, &ctx).await
                },
            ))
            .unwrap();
    let running = spawn(&manager);
    let secret_exists = || async {
        let secrets = server.list::<Secret>().await.unwrap();
        secrets.iter().any(|s| s.name_any() == "cm-1")
    };
    server.put_own("cm-1", "v").await.unwrap();
    testkit::eventually_async("the Secret is created", LIMIT, secret_exists).await;
    let creates = server.request_count("create", "secrets");
    assert_eq!(creates, 1);

    // Freeze the ConfigMap cache: its watch ends and every re-watch and relist fails.
    for verb in ["list", "watch"] {
        server
            .inject(FailRule::random(verb, "configmaps", 500, 1.0, 1))
            .expect("a status fault is valid on either server");
    }
    let attempts =
        || server.request_count("watch", "configmaps") + server.request_count("list", "configmaps");
    let before = attempts();
    server.drop_watches();
    eventually(
        "the ConfigMap informer re-watches or relists (and fails)",
        LIMIT,
        || attempts() > before,
    )
    .await;

    // The owner goes; the collector removes the Secret, whose delete event reconciles cm-1.
    let reconciled = mirror.stats().successes();
    server
        .delete("", "configmaps", Some(ns()), "cm-1")
        .await
        .unwrap();
    eventually("the Secret's deletion is reconciled", LIMIT, || {
        mirror.stats().successes() > reconciled
    })
    .await;
    assert_eq!(
        server.request_count("create", "secrets"),
        creates,
        "mirror recreated the Secret of a ConfigMap only its stale cache still had"
    );
    assert!(
        manager
            .cache()
            .informers::<ConfigMap>()
            .unwrap()
            .remove(0)
            .indexer()
            .get_by_key(&format!("{}/cm-1", ns()).parse().unwrap())
            .is_some()
    );

    // The cache catches up; the Secret never came back.
    server.clear_faults();
    eventually("the ConfigMap cache sees the deletion", LIMIT, || {
        manager
            .cache()
            .informers::<ConfigMap>()
            .unwrap()
            .remove(0)
            .indexer()
            .list()
            .iter()
            .all(|cm| !is_own_meta(&cm.metadata))
    })
    .await;
    assert!(!secret_exists().await);
    assert_eq!(server.request_count("create", "secrets"), creates);
    running.abort();
    server.shutdown().await;
}
