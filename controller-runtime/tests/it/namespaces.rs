//! A manager caching a set of namespaces: one watch per namespace under one cache per kind,
//! synced only once every namespace synced; objects elsewhere never cached nor reconciled,
//! and reading another namespace a typed error. Per-kind overrides for namespaced and
//! cluster-scoped kinds. Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against
//! that cluster (through a fault proxy where the test injects faults).

use crate::common;

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{ByObject, Error};
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::ObjectMeta;
use kube::core::Selector;
use testkit::fault::InjectFaults;

/// The test's own ConfigMap `name` in `namespace` ([`own_cm`]).
fn config_map_in(namespace: &str, name: &str) -> ConfigMap {
    let mut config_map = own_cm(name, "1");
    config_map.metadata.namespace = Some(namespace.into());
    config_map
}

/// `namespace/name` of the test's own ConfigMaps among `objects` (a whole cluster's root CA
/// publisher adds its own to every namespace).
fn names(objects: &[Arc<ConfigMap>]) -> BTreeSet<String> {
    objects
        .iter()
        .filter(|cm| is_own_meta(&cm.metadata))
        .map(|cm| {
            format!(
                "{}/{}",
                cm.metadata.namespace.as_deref().unwrap_or_default(),
                cm.metadata.name.as_deref().unwrap_or_default()
            )
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn three_namespaces_are_one_cache_that_syncs_when_all_three_did() {
    let server = TestCluster::start_with_faults().await.unwrap();
    for name in ["a", "b", "c", "d"] {
        server.create(&namespace(name, "z")).await.unwrap();
        server
            .create(&config_map_in(name, "settings"))
            .await
            .unwrap();
    }
    // Namespace c cannot be listed (nor watched) until the fault is cleared.
    server
        .inject(FailRule::new("*", "configmaps", 403, u32::MAX).in_namespace("c"))
        .expect("a status fault is valid on either server");

    let manager = Arc::new(manager(&server).default_namespaces(["a", "b", "c"]).build());
    let counts = Counts::default();
    let seen = counts.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    seen.hit(&req.to_string());
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let informers = manager.cache().informers::<ConfigMap>().unwrap();
    assert_eq!(informers.len(), 3, "one watch per namespace");
    let running = spawn(&manager);

    let synced = |namespace: &str| {
        informers.iter().any(|informer| {
            informer.name().ends_with(&format!(" in {namespace}")) && informer.has_synced()
        })
    };
    eventually("a and b synced", Duration::from_secs(30), || {
        synced("a") && synced("b")
    })
    .await;
    let lister = manager.cache().lister::<ConfigMap>().unwrap();
    assert!(!synced("c"));
    assert!(
        !lister.has_synced(),
        "the kind's cache waits for namespace c"
    );
    assert!(!manager.has_synced());
    assert_eq!(
        counts.total(),
        0,
        "no worker runs before every namespace synced"
    );

    server.clear_faults();
    eventually("every namespace synced", Duration::from_secs(60), || {
        manager.has_synced() && lister.has_synced()
    })
    .await;
    eventually("a, b and c reconciled", Duration::from_secs(30), || {
        ["a", "b", "c"]
            .iter()
            .all(|ns| counts.get(&format!("{ns}/settings")) == 1)
    })
    .await;

    // New objects: the one in a is reconciled, the one in d is never seen.
    server.create(&config_map_in("d", "late")).await.unwrap();
    server.create(&config_map_in("a", "late")).await.unwrap();
    eventually("a/late reconciled", Duration::from_secs(30), || {
        counts.get("a/late") == 1
    })
    .await;
    assert_eq!(counts.get("d/settings") + counts.get("d/late"), 0);
    let cached = names(&lister.list(&Selector::default()));
    let expected: BTreeSet<String> = ["a/late", "a/settings", "b/settings", "c/settings"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(cached, expected);
    assert_eq!(
        lister.namespaces(),
        Some(vec!["a".into(), "b".into(), "c".into()])
    );
    let in_b = lister.namespace("b").list(&Selector::default()).unwrap();
    assert_eq!(names(&in_b), ["b/settings".to_owned()].into());

    // Reading namespace d is an error that says what is cached, not an empty answer.
    let error = lister
        .namespace("d")
        .list(&Selector::default())
        .unwrap_err();
    assert!(
        matches!(&error, Error::NamespaceNotCached { namespace, .. } if namespace == "d"),
        "{error}"
    );
    assert!(error.to_string().contains("in a, b, c"), "{error}");
    let key = ObjectKey::namespaced("d", "settings").unwrap();
    assert!(matches!(
        manager.cache().get::<ConfigMap>(&key),
        Err(Error::NamespaceNotCached { .. })
    ));

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

fn secret_in(namespace: &str, name: &str, keep: bool) -> Secret {
    let mut secret = secret(name, Vec::new());
    secret.metadata.namespace = Some(namespace.into());
    if keep {
        secret.metadata.labels = Some([("keep".to_owned(), "yes".to_owned())].into());
    }
    secret.string_data = Some([("password".to_owned(), "hunter2".to_owned())].into());
    secret
}

fn namespace(name: &str, team: &str) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some([("team".to_owned(), team.to_owned())].into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    }
}

#[tokio::test(start_paused = true)]
async fn per_kind_options_override_namespaces_selectors_and_transform() {
    let server = TestCluster::start().await.unwrap();
    for name in ["a", "b"] {
        server.create(&namespace(name, "z")).await.unwrap();
    }
    for (ns, name, keep) in [("a", "s1", true), ("b", "s2", true), ("b", "s3", false)] {
        server.create(&secret_in(ns, name, keep)).await.unwrap();
    }
    for (name, team) in [("shop", "x"), ("billing", "x"), ("audit", "y")] {
        server.create(&namespace(name, team)).await.unwrap();
    }
    server
        .create(&config_map_in("a", "settings"))
        .await
        .unwrap();
    server
        .create(&config_map_in("b", "settings"))
        .await
        .unwrap();

    let manager = Arc::new(
        manager(&server)
            .default_namespaces(["a"])
            // Secrets: only namespace b, only those labelled keep=yes, data dropped.
            .by_object(
                ByObject::of::<Secret>()
                    .namespaces(["b"])
                    .labels("keep=yes")
                    .transform(|secret| {
                        let mut secret = Arc::unwrap_or_clone(secret);
                        secret.data = None;
                        Ok(Arc::new(secret))
                    }),
            )
            // Namespaces (cluster-scoped): only team x.
            .by_object(ByObject::of::<Namespace>().labels("team=x"))
            .build(),
    );
    manager.cache().informers::<Secret>().unwrap();
    manager.cache().informers::<Namespace>().unwrap();
    manager.cache().informers::<ConfigMap>().unwrap();
    let running = spawn(&manager);
    eventually("caches synced", Duration::from_secs(30), || {
        manager.has_synced()
    })
    .await;

    let cache = manager.cache();
    let secrets = cache.lister::<Secret>().unwrap();
    assert_eq!(secrets.namespaces(), Some(vec!["b".to_owned()]));
    let cached = secrets.list(&Selector::default());
    assert_eq!(cached.len(), 1);
    assert_eq!(cached[0].metadata.name.as_deref(), Some("s2"));
    assert!(cached[0].data.is_none(), "the transform dropped the data");
    assert!(matches!(
        secrets.namespace("a").get("s1"),
        Err(Error::NamespaceNotCached { .. })
    ));

    let namespaces = cache.lister::<Namespace>().unwrap();
    assert_eq!(
        namespaces.namespaces(),
        None,
        "cluster-scoped: one cluster-wide watch"
    );
    let mut teams: Vec<String> = namespaces
        .list(&Selector::default())
        .iter()
        .filter_map(|ns| ns.metadata.name.clone())
        .collect();
    teams.sort();
    assert_eq!(teams, ["billing", "shop"]);
    assert!(namespaces.get("audit").is_none());

    // ConfigMaps keep the default: namespace a only. Of the test's ConfigMaps (a whole
    // cluster's root CA publisher adds its own to every namespace) the cache holds a's alone.
    let config_maps = cache.lister::<ConfigMap>().unwrap();
    assert_eq!(config_maps.namespaces(), Some(vec!["a".to_owned()]));
    let cached = config_maps.list(&Selector::default());
    assert!(
        cached
            .iter()
            .all(|cm| cm.metadata.namespace.as_deref() == Some("a")),
        "{cached:?}"
    );
    let settings: Vec<_> = cached
        .iter()
        .filter(|cm| cm.metadata.name.as_deref() == Some("settings"))
        .collect();
    assert_eq!(settings.len(), 1);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
