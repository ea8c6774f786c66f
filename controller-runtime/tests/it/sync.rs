//! Workers do not start before every informer the controller uses has synced,
//! even when the initial lists fail a few times; and a cache that cannot sync fails `start`
//! with an error naming the informer. Runs on the simulator and, but for the timeouts (asserted
//! on the clock), with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster through a fault proxy.

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use controller_runtime::controller::{
    self, Action, Context, Controller, Request, Watch, reconciler_fn,
};
use controller_runtime::manager::{Error, Manager};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::Selector;
use testkit::fault::InjectFaults;

#[tokio::test(start_paused = true)]
async fn reconciles_only_see_synced_caches() {
    let server = TestCluster::start_with_faults().await.unwrap();
    for i in 0..50 {
        server
            .create(&own_cm(&format!("cm-{i}"), "0"))
            .await
            .unwrap();
        server
            .create(&secret(&format!("s-{i}"), vec![]))
            .await
            .unwrap();
    }
    // The first lists fail, streaming and paged alike: the reflectors retry with backoff
    // before the caches can sync.
    fail_lists(&server, "configmaps", 500, 3);
    fail_lists(&server, "secrets", 500, 4);

    let manager = Arc::new(manager(&server).build());
    let calls = Arc::new(AtomicUsize::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let (c, v) = (calls.clone(), violations.clone());
    let controller = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .owns(Watch::of::<Secret>())
        .max_concurrent_reconciles(4)
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| {
                let (calls, violations) = (c.clone(), v.clone());
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    let configmaps = ctx
                        .lister()
                        .list(&Selector::default())
                        .iter()
                        .filter(|cm| is_own_meta(&cm.metadata))
                        .count();
                    let secrets = ctx
                        .cache()
                        .lister::<Secret>()
                        .map(|lister| lister.list(&Selector::default()).len())
                        .unwrap_or(0);
                    if !ctx.cache_synced() || configmaps != 50 || secrets != 50 {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    eventually("every initial reconcile", Duration::from_secs(60), || {
        calls.load(Ordering::SeqCst) == 50
    })
    .await;
    assert_eq!(violations.load(Ordering::SeqCst), 0);
    assert_eq!(controller.stats().panics(), 0);
    // Every failing list was retried (so the sync really was delayed).
    assert!(server.request_count("watch", "secrets") >= 5);
    assert!(server.request_count("list", "secrets") >= 4);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// Fails the next `count` lists of `resource`, with `code`: a streaming list (a watch) and the
/// paged list the reflector falls back to in the same attempt.
fn fail_lists(server: &TestCluster, resource: &str, code: u16, count: u32) {
    for verb in ["watch", "list"] {
        server
            .inject(FailRule::new(verb, resource, code, count))
            .expect("a status fault is valid on either server");
    }
}

/// Starts a manager whose Secret informer can never list; returns its error, how long `start`
/// took (of tokio time) and whether it ran on the simulator.
async fn start_without_secrets(cache_sync_timeout: Option<Duration>) -> (Error, Duration, bool) {
    let server = TestCluster::start_with_faults().await.unwrap();
    fail_lists(&server, "secrets", 403, 100_000);
    let mut builder = manager(&server);
    if let Some(timeout) = cache_sync_timeout {
        builder = builder.cache_sync_timeout(timeout);
    }
    let manager = builder.build();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .owns(Watch::of::<Secret>())
        .build(reconciler_fn(
            |_req: Request, _ctx: Context<ConfigMap>| async { Ok::<_, Infallible>(Action::done()) },
        ))
        .unwrap();
    let started = tokio::time::Instant::now();
    let error = manager.start().await.unwrap_err();
    let took = started.elapsed();
    let on_simulator = server.sim().is_some();
    server.shutdown().await;
    (error, took, on_simulator)
}

#[tokio::test(start_paused = true)]
async fn a_cache_that_cannot_sync_fails_start_naming_it() {
    // Twenty seconds of the simulator's paused clock; one real second on a real server.
    let timeout = match testenv::on_existing_cluster() {
        false => Duration::from_secs(20),
        true => Duration::from_secs(1),
    };
    let (error, took, on_simulator) = start_without_secrets(Some(timeout)).await;
    assert!(matches!(error, Error::CacheSync(_)), "{error}");
    let message = error.to_string();
    assert!(message.contains("Secret"), "{message}");
    assert!(!message.contains("ConfigMap"), "{message}");
    if on_simulator {
        assert!(
            took >= Duration::from_secs(20) && took < Duration::from_secs(21),
            "{took:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn the_cache_sync_timeout_is_two_minutes_by_default() {
    if testkit::cluster::sim_only("virtual time: the two-minute default is asserted on the clock") {
        return;
    }
    let (error, took, _) = start_without_secrets(None).await;
    assert!(matches!(error, Error::CacheSync(_)), "{error}");
    assert!(error.to_string().contains("Secret"), "{error}");
    assert!(
        took >= Duration::from_secs(120) && took < Duration::from_secs(121),
        "{took:?}"
    );
}

#[tokio::test]
async fn builder_rejects_duplicate_names_and_bad_settings() {
    // No server needed: nothing is started.
    let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
    let manager = Manager::builder(kube::Client::try_from(config).unwrap()).build();
    let noop = || {
        reconciler_fn(|_req: Request, _ctx: Context<ConfigMap>| async {
            Ok::<_, Infallible>(Action::done())
        })
    };
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(noop())
        .unwrap();
    let error = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(noop())
        .unwrap_err();
    assert!(
        matches!(error, controller::Error::DuplicateName(ref name) if name == "configmap"),
        "{error}"
    );
    let error = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .named("zero")
        .max_concurrent_reconciles(0)
        .build(noop())
        .unwrap_err();
    assert!(
        matches!(error, controller::Error::InvalidSetting { .. }),
        "{error}"
    );
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .named("second")
        .build(noop())
        .unwrap();
}
