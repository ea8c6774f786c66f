//! The finalizer helper adds its finalizer, runs cleanup when the object is
//! deleted (retrying a failed cleanup), and removes the finalizer only after cleanup succeeded —
//! the object disappears only then. Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG`
//! set, against that cluster.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn},
    util::{FinalizerEvent, finalizer},
};
use k8s_openapi::api::core::v1::ConfigMap;

const FINALIZER: &str = "example.com/cleanup";

#[tokio::test(start_paused = true)]
async fn cleanup_runs_before_the_object_disappears() {
    let server = Arc::new(TestCluster::start().await.unwrap());
    let manager = Arc::new(manager(&server).build());
    let cleanups = Arc::new(AtomicUsize::new(0));
    let present_at_success = Arc::new(AtomicUsize::new(0));
    let (c, p, s) = (cleanups.clone(), present_at_success.clone(), server.clone());
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| {
                let (cleanups, present, server) = (c.clone(), p.clone(), s.clone());
                async move {
                    let Some(obj) = ctx.get() else {
                        return Ok(Action::done());
                    };
                    finalizer(&ctx.api(), FINALIZER, obj, |event| async move {
                        match event {
                            FinalizerEvent::Apply(_) => Ok(Action::done()),
                            FinalizerEvent::Cleanup(_) => {
                                if cleanups.fetch_add(1, Ordering::SeqCst) == 0 {
                                    return Err(ReconcileError::new("external system unavailable"));
                                }
                                // Cleanup succeeds while the object still exists.
                                if own_object(&server).await.is_some() {
                                    present.fetch_add(1, Ordering::SeqCst);
                                }
                                Ok(Action::done())
                            }
                        }
                    })
                    .await
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);

    server.create(&own_cm("a", "1")).await.unwrap();
    let has_finalizer = || async {
        own_object(&server)
            .await
            .and_then(|cm| cm.metadata.finalizers)
            .is_some_and(|finalizers| finalizers == [FINALIZER])
    };
    testkit::eventually_async("the finalizer", Duration::from_secs(30), has_finalizer).await;

    server
        .delete("", "configmaps", Some(ns()), "a")
        .await
        .unwrap();
    eventually("the failed cleanup", Duration::from_secs(30), || {
        cleanups.load(Ordering::SeqCst) >= 1
    })
    .await;
    testkit::eventually_async("the object's removal", Duration::from_secs(30), || async {
        own_object(&server).await.is_none()
    })
    .await;
    assert_eq!(
        cleanups.load(Ordering::SeqCst),
        2,
        "one failed and one successful cleanup"
    );
    assert_eq!(present_at_success.load(Ordering::SeqCst), 1);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
}

/// The test's own ConfigMap on the server, if there is one (a whole cluster puts ConfigMaps of
/// its own in the namespace).
async fn own_object(server: &TestCluster) -> Option<ConfigMap> {
    let all = server.list::<ConfigMap>().await.unwrap();
    all.into_iter().find(|cm| is_own_meta(&cm.metadata))
}

/// The finalizer patches carry a `test` of the list they were computed from: an object read
/// before someone else changed its finalizers makes the patch fail, and the other writer's
/// finalizers survive.
#[tokio::test]
async fn finalizer_patches_fail_on_a_concurrent_edit() {
    let server = TestCluster::start().await.unwrap();
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(server.client().unwrap(), ns());
    let finalizers_on_server = || async {
        server.list::<ConfigMap>().await.unwrap()[0]
            .metadata
            .finalizers
            .clone()
            .unwrap_or_default()
    };
    let calls = AtomicUsize::new(0);
    let count_call = |_event: FinalizerEvent<ConfigMap>| {
        calls.fetch_add(1, Ordering::SeqCst);
        async { Ok::<_, ReconcileError>(Action::done()) }
    };

    // Adding: the object was read without finalizers, then another controller added one.
    let stale = Arc::new(server.create(&cm("a", "1")).await.unwrap());
    let mut edited = (*stale).clone();
    edited.metadata.finalizers = Some(vec!["other.io/x".into()]);
    server.replace(&edited).await.unwrap();
    let error = finalizer(&api, FINALIZER, Arc::clone(&stale), count_call)
        .await
        .unwrap_err();
    assert!(!error.is_terminal(), "retried: {error}");
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "no reconcile before the finalizer is in"
    );
    assert_eq!(finalizers_on_server().await, ["other.io/x"]);

    // Removing: the object was read as [other, ours, late] while being deleted; since then
    // `other` removed itself, so index 1 now holds `late`, which must survive.
    let mut three = server.list::<ConfigMap>().await.unwrap()[0].clone();
    three.metadata.finalizers = Some(vec![
        "other.io/x".into(),
        FINALIZER.into(),
        "late.io/y".into(),
    ]);
    server.replace(&three).await.unwrap();
    server
        .delete("", "configmaps", Some(ns()), "a")
        .await
        .unwrap();
    let deleting = Arc::new(server.list::<ConfigMap>().await.unwrap()[0].clone());
    assert!(deleting.metadata.deletion_timestamp.is_some());
    let mut reshuffled = (*deleting).clone();
    reshuffled.metadata.finalizers = Some(vec![FINALIZER.into(), "late.io/y".into()]);
    server.replace(&reshuffled).await.unwrap();
    let error = finalizer(&api, FINALIZER, deleting, count_call)
        .await
        .unwrap_err();
    assert!(!error.is_terminal(), "retried: {error}");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the cleanup ran");
    assert_eq!(
        finalizers_on_server().await,
        [FINALIZER, "late.io/y"],
        "nothing removed"
    );
    server.shutdown().await;
}
