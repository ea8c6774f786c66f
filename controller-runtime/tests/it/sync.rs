//! Workers do not start before every informer the controller uses has synced,
//! even when the initial lists fail a few times; and a cache that cannot sync fails `start`
//! with an error naming the informer.

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

#[tokio::test(start_paused = true)]
async fn reconciles_only_see_synced_caches() {
    if testkit::cluster::sim_only("virtual time, fault injection, request counts and open watches")
    {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    for i in 0..50 {
        server.create(&cm(&format!("cm-{i}"), "0")).unwrap();
        server.create(&secret(&format!("s-{i}"), vec![])).unwrap();
    }
    // No streaming lists on this server: the caches list in pages, and those lists fail.
    server.set_watch_list(false);
    // The first lists fail: the reflectors retry with backoff before the caches can sync.
    server.fail_next(FailRule::new("list", "configmaps", 500, 3));
    server.fail_next(FailRule::new("list", "secrets", 500, 4));

    let manager = Arc::new(manager(&server).build());
    let calls = Arc::new(AtomicUsize::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let (c, v) = (calls.clone(), violations.clone());
    let controller = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .owns(Watch::of::<Secret>())
        .max_concurrent_reconciles(4)
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| {
                let (calls, violations) = (c.clone(), v.clone());
                async move {
                    calls.fetch_add(1, Ordering::SeqCst);
                    let configmaps = ctx.lister().list(&Selector::default()).len();
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
    assert!(server.request_count("list", "secrets") >= 5);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// Starts a manager whose Secret informer can never list; returns its error and how long
/// `start` took (of tokio time).
async fn start_without_secrets(cache_sync_timeout: Option<Duration>) -> (Error, Duration) {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    // No streaming lists on this server: the caches list in pages, and those lists fail.
    server.set_watch_list(false);
    server.fail_next(FailRule::new("list", "secrets", 403, 100_000));
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
    server.shutdown().await;
    (error, took)
}

#[tokio::test(start_paused = true)]
async fn a_cache_that_cannot_sync_fails_start_naming_it() {
    if testkit::cluster::sim_only("virtual time, fault injection") {
        return;
    }
    let (error, took) = start_without_secrets(Some(Duration::from_secs(20))).await;
    assert!(matches!(error, Error::CacheSync(_)), "{error}");
    let message = error.to_string();
    assert!(message.contains("Secret"), "{message}");
    assert!(!message.contains("ConfigMap"), "{message}");
    assert!(
        took >= Duration::from_secs(20) && took < Duration::from_secs(21),
        "{took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn the_cache_sync_timeout_is_two_minutes_by_default() {
    if testkit::cluster::sim_only("virtual time, fault injection") {
        return;
    }
    let (error, took) = start_without_secrets(None).await;
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
