//! Metadata-only watches: a ConfigMap controller that owns Secrets through `owns_metadata`
//! caches their metadata only (no data ever reaches it) and is re-triggered by their changes;
//! typed predicates and mappers see `PartialObjectMeta`; the manager hands out metadata
//! informers scoped like the full ones, and both can coexist.

use crate::common;

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::PartialObjectMeta;
use kube_rt_controller_runtime::predicate::{LabelsChanged, from_fn};
use kube_rt_controller_runtime::{
    Action, Context, Controller, Error, ObjectKey, Request, Selectors, reconciler_fn,
};

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
        std::future::ready(Ok(Action::Done))
    }
}

#[tokio::test(start_paused = true)]
async fn owned_secrets_watched_metadata_only_trigger_their_owner_and_cache_no_data() {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        .for_::<ConfigMap>()
        .owns_metadata::<Secret>()
        .build(reconciler_fn(counting(&counts)))
        .unwrap();
    let running = spawn(&manager);

    let a = server.create(&cm("a", "1")).unwrap();
    eventually("a's reconcile", Duration::from_secs(30), || {
        counts.get("default/a") == 1
    })
    .await;
    server
        .create(&owned_secret("owned", &a, &[("tier", "db")]))
        .unwrap();
    eventually(
        "the owned secret's creation",
        Duration::from_secs(30),
        || counts.get("default/a") == 2,
    )
    .await;

    // The cache holds the secret's metadata, and nothing else: the object is a
    // PartialObjectMeta with no `data` field at all (and no `types`, which the informer drops).
    let cache = manager.cache();
    let key = ObjectKey::namespaced(NS, "owned").unwrap();
    let cached: Arc<PartialObjectMeta<Secret>> =
        cache.get_metadata::<Secret>(&key).unwrap().unwrap();
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
    assert_eq!(
        cache.metadata_lister::<Secret>().unwrap().indexer().len(),
        1
    );
    assert!(
        matches!(cache.lister::<Secret>(), Err(Error::NotCached(_))),
        "no full cache of secrets"
    );

    // A change to the owned secret and its deletion each re-trigger the owner.
    server
        .replace(&owned_secret("owned", &a, &[("tier", "cache")]))
        .unwrap();
    eventually("the owned secret's update", Duration::from_secs(30), || {
        counts.get("default/a") == 3
    })
    .await;
    server.delete("", "secrets", Some(NS), "owned").unwrap();
    eventually(
        "the owned secret's deletion",
        Duration::from_secs(30),
        || counts.get("default/a") == 4,
    )
    .await;
    assert_eq!(counts.total(), 4);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn typed_predicates_and_mappers_see_metadata_events() {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        .for_::<ConfigMap>()
        // Owned secrets re-trigger their owner only when their labels change.
        .owns_metadata_with::<Secret>(LabelsChanged)
        // Secrets labelled `notify=<config map>` trigger that config map, unless muted.
        .watches_metadata_with::<Secret, _, _>(
            |secret: &PartialObjectMeta<Secret>| {
                let target = secret.metadata.labels.as_ref()?.get("notify")?;
                ObjectKey::namespaced(NS, target).ok()
            },
            from_fn(|secret: &PartialObjectMeta<Secret>| {
                secret
                    .metadata
                    .annotations
                    .as_ref()
                    .is_none_or(|a| !a.contains_key("muted"))
            }),
        )
        .build(reconciler_fn(counting(&counts)))
        .unwrap();
    let running = spawn(&manager);

    let a = server.create(&cm("a", "1")).unwrap();
    server.create(&cm("b", "1")).unwrap();
    eventually("the initial reconciles", Duration::from_secs(30), || {
        counts.total() == 2
    })
    .await;

    // An annotation-only change of an owned secret is filtered out by LabelsChanged; the label
    // change after it passes. The handler sees the two in order, so one more reconcile of `a`
    // means the first one was dropped.
    server
        .create(&owned_secret("owned", &a, &[("v", "1")]))
        .unwrap();
    eventually(
        "the owned secret's creation",
        Duration::from_secs(30),
        || counts.get("default/a") == 2,
    )
    .await;
    let mut annotated = owned_secret("owned", &a, &[("v", "1")]);
    annotated.metadata.annotations = Some(BTreeMap::from([("note".into(), "x".into())]));
    server.replace(&annotated).unwrap();
    server
        .replace(&owned_secret("owned", &a, &[("v", "2")]))
        .unwrap();
    eventually("the label change", Duration::from_secs(30), || {
        counts.get("default/a") == 3
    })
    .await;

    // The label mapper: a muted secret is dropped by the predicate, an unmuted one maps to `b`.
    let mut muted = secret("muted", Vec::new());
    muted.metadata.labels = Some(BTreeMap::from([("notify".into(), "b".into())]));
    muted.metadata.annotations = Some(BTreeMap::from([("muted".into(), "yes".into())]));
    server.create(&muted).unwrap();
    let mut loud = secret("loud", Vec::new());
    loud.metadata.labels = Some(BTreeMap::from([("notify".into(), "b".into())]));
    server.create(&loud).unwrap();
    eventually("the mapped secret", Duration::from_secs(30), || {
        counts.get("default/b") == 2
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(counts.get("default/a"), 3);
    assert_eq!(counts.get("default/b"), 2);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_managers_metadata_informer_is_scoped_like_the_full_one_and_coexists_with_it() {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    for (name, team) in [("a", "red"), ("b", "blue")] {
        let mut obj = secret(name, Vec::new());
        obj.metadata.labels = Some(BTreeMap::from([("team".into(), team.into())]));
        server.create(&obj).unwrap();
    }
    let manager = Arc::new(
        manager(&server)
            .selectors_for::<Secret>(Selectors::new().labels("team=red"))
            .build(),
    );
    let metadata = manager.metadata_informer::<Secret>();
    let full = manager.informer::<Secret>();
    assert!(Arc::ptr_eq(
        &metadata,
        &manager.metadata_informer::<Secret>()
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
    let lister = manager.cache().metadata_lister::<Secret>().unwrap();
    assert_eq!(
        names(lister.indexer().list()),
        ["a"],
        "the selectors apply to the metadata informer"
    );
    assert_eq!(full.cache_size(), 1);
    assert_eq!(
        server.request_count("list", "secrets"),
        2,
        "two caches, two lists"
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
