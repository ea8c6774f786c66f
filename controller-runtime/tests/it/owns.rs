//! A ConfigMap controller that owns Secrets. Creating a ConfigMap reconciles it
//! once; creating or deleting a Secret it controls re-triggers it; a Secret whose controller
//! reference points elsewhere (another kind, another group, or a non-controller reference) does
//! not; with the caches typed and compact. Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster (the
//! controller sees the test's own ConfigMaps only).

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::cache::Storage;
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};

#[tokio::test(start_paused = true)]
async fn owned_secrets_trigger_their_controller_only() {
    owned_secrets_trigger(Storage::typed()).await;
}

/// The same with both kinds kept compact: owner references and keys come from the lean
/// metadata.
#[tokio::test(start_paused = true)]
async fn owned_secrets_trigger_their_controller_only_when_compact() {
    owned_secrets_trigger(Storage::compact()).await;
}

async fn owned_secrets_trigger(storage: Storage) {
    let server = TestCluster::start().await.unwrap();
    let key = |name: &str| format!("{}/{name}", ns());
    let manager = Arc::new(manager(&server).default_storage(storage).build());
    let counts = Counts::default();
    let seen = counts.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .owns(Watch::of::<Secret>())
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    assert!(ctx.cache_synced());
                    seen.hit(&req.to_string());
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);

    let a = server.create(&own_cm("a", "1")).await.unwrap();
    let a_uid = a.metadata.uid.clone().unwrap();
    eventually("the first reconcile", Duration::from_secs(30), || {
        counts.get(&key("a")) == 1
    })
    .await;

    // A Secret controlled by `a`: its creation and its deletion each re-trigger `a`.
    server
        .create(&secret(
            "owned",
            vec![owner_ref("v1", "ConfigMap", "a", &a_uid, true)],
        ))
        .await
        .unwrap();
    eventually(
        "the owned secret's creation",
        Duration::from_secs(30),
        || counts.get(&key("a")) == 2,
    )
    .await;
    server
        .delete("", "secrets", Some(ns()), "owned")
        .await
        .unwrap();
    eventually(
        "the owned secret's deletion",
        Duration::from_secs(30),
        || counts.get(&key("a")) == 3,
    )
    .await;

    // Secrets whose controller is something else: a Deployment named `a` (with a plain,
    // non-controller reference to the ConfigMap), and a ConfigMap-kind in another API group.
    server
        .create(&secret(
            "foreign-kind",
            vec![
                owner_ref("v1", "ConfigMap", "a", &a_uid, false),
                owner_ref("apps/v1", "Deployment", "a", "other-uid", true),
            ],
        ))
        .await
        .unwrap();
    server
        .create(&secret(
            "foreign-group",
            vec![owner_ref("example.com/v1", "ConfigMap", "a", "x", true)],
        ))
        .await
        .unwrap();
    for name in ["foreign-kind", "foreign-group"] {
        // A whole cluster's garbage collector may have removed it first (its owner is gone).
        if let Err(error) = server.delete("", "secrets", Some(ns()), name).await {
            assert!(error.to_string().contains("not found"), "{error}");
        }
    }
    // A sentinel after them: the Secret handler sees events in order, so once `b` is reconciled
    // because of its Secret, the foreign Secrets' events have been handled.
    let b = server.create(&own_cm("b", "1")).await.unwrap();
    eventually("b's own reconcile", Duration::from_secs(30), || {
        counts.get(&key("b")) == 1
    })
    .await;
    server
        .create(&secret(
            "owned-by-b",
            vec![owner_ref(
                "v1",
                "ConfigMap",
                "b",
                b.metadata.uid.as_deref().unwrap(),
                true,
            )],
        ))
        .await
        .unwrap();
    eventually("the sentinel", Duration::from_secs(30), || {
        counts.get(&key("b")) == 2
    })
    .await;
    assert_eq!(
        counts.get(&key("a")),
        3,
        "foreign secrets must not trigger `a`"
    );
    assert_eq!(counts.total(), 5);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
