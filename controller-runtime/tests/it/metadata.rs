//! Metadata-only watches: a ConfigMap controller that owns Secrets through
//! `owns(Watch::of::<Metadata<Secret>>())` caches their metadata only (no data ever reaches it)
//! and is re-triggered by their changes; typed predicates and mappers see `PartialObjectMeta`;
//! the manager hands out metadata informers scoped like the full ones, both can coexist, and
//! each takes its own transform. Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set,
//! against that cluster (through a fault proxy where the test counts requests).

use crate::common;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{ByObject, Error, Metadata};
use controller_runtime::controller::predicate::{LabelsChanged, from_fn};
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::PartialObjectMeta;
use testkit::fault::InjectFaults;

/// A secret owned by (controlled by) the config map `owner`, with data and labels.
fn owned_secret(name: &str, owner: &ConfigMap, labels: &[(&str, &str)]) -> Secret {
    let uid = owner.metadata.uid.as_deref().unwrap();
    let owner_name = owner.metadata.name.as_deref().unwrap();
    let mut obj = secret(
        name,
        vec![owner_ref("v1", "ConfigMap", owner_name, uid, true)],
    );
    obj.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    obj.data = Some(BTreeMap::from([(
        "password".to_owned(),
        ByteString(b"hunter2".to_vec()),
    )]));
    obj
}

/// A controller of config maps that counts its reconciles per key.
fn counting(
    seen: &Counts,
) -> impl Fn(Request, Context<ConfigMap>) -> std::future::Ready<Result<Action, Infallible>>
+ Send
+ Sync
+ 'static {
    let seen = seen.clone();
    move |req: Request, _ctx: Context<ConfigMap>| {
        seen.hit(&req.to_string());
        std::future::ready(Ok(Action::done()))
    }
}

#[tokio::test(start_paused = true)]
async fn owned_secrets_watched_metadata_only_trigger_their_owner_and_cache_no_data() {
    let server = TestCluster::start().await.unwrap();
    let a_key = format!("{}/a", ns());
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .owns(Watch::of::<Metadata<Secret>>())
        .build(reconciler_fn(counting(&counts)))
        .unwrap();
    let running = spawn(&manager);

    let a = server.create(&cm("a", "1")).await.unwrap();
    eventually("a's reconcile", Duration::from_secs(30), || {
        counts.get(&a_key) == 1
    })
    .await;
    server
        .create(&owned_secret("owned", &a, &[("tier", "db")]))
        .await
        .unwrap();
    eventually(
        "the owned secret's creation",
        Duration::from_secs(30),
        || counts.get(&a_key) == 2,
    )
    .await;

    // The cache holds the secret's metadata, and nothing else: the object is a
    // PartialObjectMeta with no `data` field at all (and no `types`, which the informer drops).
    let cache = manager.cache();
    let key = ObjectKey::namespaced(ns(), "owned").unwrap();
    let cached: Arc<PartialObjectMeta<Secret>> =
        cache.get::<Metadata<Secret>>(&key).unwrap().unwrap();
    assert_eq!(cached.metadata.labels.as_ref().unwrap()["tier"], "db");
    let json = serde_json::to_value(&*cached).unwrap();
    let fields: Vec<&str> = json
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(fields, ["metadata"], "{json}");
    assert!(!json.to_string().contains("hunter2"));
    assert_eq!(cache.lister::<Metadata<Secret>>().unwrap().len(), 1);
    assert!(
        matches!(cache.lister::<Secret>(), Err(Error::NotCached(_))),
        "no full cache of secrets"
    );

    // A change to the owned secret and its deletion each re-trigger the owner.
    server
        .replace(&owned_secret("owned", &a, &[("tier", "cache")]))
        .await
        .unwrap();
    eventually("the owned secret's update", Duration::from_secs(30), || {
        counts.get(&a_key) == 3
    })
    .await;
    server
        .delete("", "secrets", Some(ns()), "owned")
        .await
        .unwrap();
    eventually(
        "the owned secret's deletion",
        Duration::from_secs(30),
        || counts.get(&a_key) == 4,
    )
    .await;
    // Nothing else was reconciled but the ConfigMaps a whole cluster's controllers put in every
    // namespace (none on the simulator).
    let cluster_own: usize = ["kube-root-ca.crt", "openshift-service-ca.crt"]
        .iter()
        .map(|name| counts.get(&format!("{}/{name}", ns())))
        .sum();
    assert_eq!(counts.total() - cluster_own, 4);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn typed_predicates_and_mappers_see_metadata_events() {
    let server = TestCluster::start().await.unwrap();
    let key = |name: &str| format!("{}/{name}", ns());
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        // Owned secrets re-trigger their owner only when their labels change.
        .owns(Watch::of::<Metadata<Secret>>().predicate(LabelsChanged))
        // Secrets labelled `notify=<config map>` trigger that config map, unless muted.
        .watches(
            Watch::of::<Metadata<Secret>>().predicate(from_fn(
                |secret: &PartialObjectMeta<Secret>| {
                    secret
                        .metadata
                        .annotations
                        .as_ref()
                        .is_none_or(|a| !a.contains_key("muted"))
                },
            )),
            |secret: &PartialObjectMeta<Secret>| {
                let target = secret.metadata.labels.as_ref()?.get("notify")?;
                ObjectKey::namespaced(ns(), target).ok()
            },
        )
        .build(reconciler_fn(counting(&counts)))
        .unwrap();
    let running = spawn(&manager);

    let a = server.create(&own_cm("a", "1")).await.unwrap();
    server.create(&own_cm("b", "1")).await.unwrap();
    eventually("the initial reconciles", Duration::from_secs(30), || {
        counts.total() == 2
    })
    .await;

    // An annotation-only change of an owned secret is filtered out by LabelsChanged; the label
    // change after it passes. The handler sees the two in order, so one more reconcile of `a`
    // means the first one was dropped.
    server
        .create(&owned_secret("owned", &a, &[("v", "1")]))
        .await
        .unwrap();
    eventually(
        "the owned secret's creation",
        Duration::from_secs(30),
        || counts.get(&key("a")) == 2,
    )
    .await;
    let mut annotated = owned_secret("owned", &a, &[("v", "1")]);
    annotated.metadata.annotations = Some(BTreeMap::from([("note".into(), "x".into())]));
    server.replace(&annotated).await.unwrap();
    server
        .replace(&owned_secret("owned", &a, &[("v", "2")]))
        .await
        .unwrap();
    eventually("the label change", Duration::from_secs(30), || {
        counts.get(&key("a")) == 3
    })
    .await;

    // The label mapper: a muted secret is dropped by the predicate, an unmuted one maps to `b`.
    let mut muted = secret("muted", Vec::new());
    muted.metadata.labels = Some(BTreeMap::from([("notify".into(), "b".into())]));
    muted.metadata.annotations = Some(BTreeMap::from([("muted".into(), "yes".into())]));
    server.create(&muted).await.unwrap();
    let mut loud = secret("loud", Vec::new());
    loud.metadata.labels = Some(BTreeMap::from([("notify".into(), "b".into())]));
    server.create(&loud).await.unwrap();
    eventually("the mapped secret", Duration::from_secs(30), || {
        counts.get(&key("b")) == 2
    })
    .await;
    // A sentinel after them, mapped to `c`: the mapper's handler sees events in order, so once
    // `c` is reconciled, the muted secret's event has been handled.
    let mut sentinel = secret("sentinel", Vec::new());
    sentinel.metadata.labels = Some(BTreeMap::from([("notify".into(), "c".into())]));
    server.create(&sentinel).await.unwrap();
    eventually("the sentinel", Duration::from_secs(30), || {
        counts.get(&key("c")) == 1
    })
    .await;
    assert_eq!(counts.get(&key("a")), 3);
    assert_eq!(counts.get(&key("b")), 2);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_metadata_cache_is_scoped_like_the_full_one_coexists_with_it_and_has_its_own_transform()
{
    let server = TestCluster::start_with_faults().await.unwrap();
    for (name, team) in [("a", "red"), ("b", "blue")] {
        let mut obj = secret(name, Vec::new());
        obj.metadata.labels = Some(BTreeMap::from([("team".into(), team.into())]));
        server.create(&obj).await.unwrap();
    }
    let manager = Arc::new(
        manager(&server)
            .by_object(ByObject::of::<Secret>().labels("team=red"))
            // The metadata cache takes a transform of its own; the full cache does not see it.
            .by_object(ByObject::of::<Metadata<Secret>>().transform(|secret| {
                let mut secret = Arc::unwrap_or_clone(secret);
                secret
                    .metadata
                    .annotations
                    .get_or_insert_default()
                    .insert("seen-by".into(), "metadata-transform".into());
                Ok(Arc::new(secret))
            }))
            .build(),
    );
    let metadata = manager
        .cache()
        .informers::<Metadata<Secret>>()
        .unwrap()
        .remove(0);
    let full = manager.cache().informers::<Secret>().unwrap().remove(0);
    assert!(Arc::ptr_eq(
        &metadata,
        &manager
            .cache()
            .informers::<Metadata<Secret>>()
            .unwrap()
            .remove(0)
    ));
    let running = spawn(&manager);
    eventually("both caches synced", Duration::from_secs(30), || {
        metadata.has_synced() && full.has_synced()
    })
    .await;

    let names = |list: Vec<Arc<PartialObjectMeta<Secret>>>| -> Vec<String> {
        list.iter()
            .filter_map(|s| s.metadata.name.clone())
            .collect()
    };
    let lister = manager.cache().lister::<Metadata<Secret>>().unwrap();
    assert_eq!(
        names(lister.list(&Default::default())),
        ["a"],
        "the selectors apply to the metadata informer"
    );
    assert_eq!(full.cache_size(), 1);
    let transformed = lister.namespace(ns()).get("a").unwrap().unwrap();
    assert_eq!(
        transformed.metadata.annotations.as_ref().unwrap()["seen-by"],
        "metadata-transform"
    );
    let untouched = manager.cache().lister::<Secret>().unwrap();
    let untouched = untouched.namespace(ns()).get("a").unwrap().unwrap();
    assert!(untouched.metadata.annotations.is_none(), "{untouched:?}");
    assert_eq!(
        server.request_count("watch", "secrets"),
        2,
        "two caches, two streaming lists (each going on as its watch)"
    );
    assert_eq!(server.request_count("list", "secrets"), 0);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
