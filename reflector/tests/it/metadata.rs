//! Metadata-only lister-watchers: lists, watches, streaming lists and relists of
//! `PartialObjectMetadata`, through the same reflector as full objects.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{FailRule, WatchListMode};
use common::*;
use indexer::{Indexer, Indexers, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use reflector::{ApiListerWatcher, MetadataListerWatcher, PartialObjectMeta};
use testkit::config_maps::own_cm;

type Meta = PartialObjectMeta<ConfigMap>;

/// A recording metadata lister-watcher of the test's own config maps in [`ns`]`()`.
fn metadata(client: kube::Client) -> Arc<Recorder<Meta>> {
    let api: Api<Meta> = Api::namespaced(client, ns());
    let lister_watcher: MetadataListerWatcher<ConfigMap> =
        ApiListerWatcher::new(api).labels(OWN_SELECTOR);
    Recorder::new(Arc::new(lister_watcher))
}

fn meta_cache() -> Indexer<Meta> {
    Indexer::new(Indexers::new().with_namespace())
}

/// name → resourceVersion of a metadata cache.
fn meta_state(store: &dyn Store<Meta>) -> State {
    store
        .list()
        .iter()
        .map(|obj| {
            let meta = &obj.metadata;
            (
                meta.name.clone().unwrap_or_default(),
                meta.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

async fn meta_converged(server: &TestCluster, store: &dyn Store<Meta>) {
    converged_to(
        async || server.own_state().await.unwrap(),
        || meta_state(store),
    )
    .await;
}

/// Every cached object came from the server as a `PartialObjectMetadata` (the kind a server
/// only sends when metadata was asked for), carrying the labels it was given.
fn assert_served_as_metadata(store: &dyn Store<Meta>) {
    for obj in store.list() {
        let types = obj
            .types
            .as_ref()
            .expect("the served object names its type");
        assert_eq!(
            (types.api_version.as_str(), types.kind.as_str()),
            ("meta.k8s.io/v1", "PartialObjectMetadata"),
            "{obj:?}"
        );
        assert_eq!(
            obj.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("team"))
                .map(String::as_str),
            Some("a"),
            "{obj:?}"
        );
    }
}

/// Creates or replaces one of the test's own config maps, labelled, with a large data entry;
/// returns its resourceVersion.
async fn put_labelled(server: &TestCluster, name: &str, value: &str) -> String {
    let mut obj = own_cm(name, value);
    obj.metadata
        .labels
        .get_or_insert_default()
        .insert("team".to_owned(), "a".to_owned());
    obj.data = Some(BTreeMap::from([("payload".to_owned(), value.repeat(1024))]));
    let stored = match server.replace(&obj).await {
        Ok(stored) => stored,
        Err(_) => server.create(&obj).await.expect("create the ConfigMap"),
    };
    stored.metadata.resource_version.unwrap()
}

#[tokio::test(start_paused = true)]
async fn pages_and_watch_events_arrive_as_metadata() {
    let server = TestCluster::start().await.unwrap();
    for i in 0..7 {
        put_labelled(&server, &format!("cm-{i}"), "x").await;
    }
    let lw = metadata(server.client().unwrap());
    let store = Arc::new(meta_cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options().page_size(3));
    meta_converged(&server, &*store).await;
    assert_eq!(lw.calls("list").len(), 3, "7 objects in pages of 3");
    assert_served_as_metadata(&*store);

    put_labelled(&server, "cm-1", "y").await;
    server.remove("cm-2").await.unwrap();
    put_labelled(&server, "new", "z").await;
    meta_converged(&server, &*store).await;
    assert_served_as_metadata(&*store);
    assert_eq!(lw.calls("list").len(), 3, "no relist");
    assert!(seen.errors.lock().is_empty(), "{:?}", seen.errors.lock());
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_expired_metadata_watch_relists() {
    let server = TestCluster::start_with_faults().await.unwrap();
    put_labelled(&server, "a", "0").await;
    let lw = metadata(server.client().unwrap());
    let store = Arc::new(meta_cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options());
    meta_converged(&server, &*store).await;
    assert_eq!(lw.calls("list").len(), 1);

    // A watch that lived a while, so its end is not mistaken for a dropping server.
    tokio::time::sleep(Duration::from_secs(2)).await;
    // The watch ends with an in-band 410, as a real server reports an expired version: the
    // reflector relists (metadata again) and watches on from the relist.
    server
        .inject(FailRule::new("watch", "configmaps", 410, 1).in_band())
        .unwrap();
    server.drop_watches();
    eventually("the relist", Duration::from_secs(60), || {
        lw.calls("list").len() == 2
    })
    .await;
    put_labelled(&server, "b", "0").await;
    server.remove("a").await.unwrap();
    meta_converged(&server, &*store).await;
    assert_eq!(seen.codes(), [Some(410)], "{:?}", seen.errors.lock());
    assert_served_as_metadata(&*store);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_metadata_streaming_list_ends_at_the_bookmark_and_goes_on_watching() {
    let server = TestCluster::start().await.unwrap();
    for i in 0..5 {
        put_labelled(&server, &format!("cm-{i}"), "x").await;
    }
    let lw = metadata(server.client().unwrap());
    let store = Arc::new(meta_cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(
        lw.clone(),
        store.clone(),
        seen.options().streaming_list(true),
    );
    meta_converged(&server, &*store).await;
    let last = put_labelled(&server, "cm-0", "y").await;
    meta_converged(&server, &*store).await;

    assert!(lw.calls("list").is_empty(), "streamed, never listed");
    let watches = lw.calls("watch");
    assert_eq!(watches.len(), 1, "{watches:?}");
    assert!(watches[0].send_initial_events);
    // The last change's version (or a real server's later bookmark).
    let synced = running.reflector.last_sync_resource_version();
    match server.sim() {
        Some(sim) => assert_eq!(synced, sim.resource_version().to_string()),
        None => assert!(version(&synced) >= version(&last), "{synced} < {last}"),
    }
    assert_served_as_metadata(&*store);
    assert!(seen.errors.lock().is_empty(), "{:?}", seen.errors.lock());
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_server_refusing_metadata_streaming_lists_gets_a_paginated_metadata_list() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.set_watch_list_mode(WatchListMode::Rejected);
    put_labelled(&server, "a", "0").await;
    let lw = metadata(server.client().unwrap());
    let store = Arc::new(meta_cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(
        lw.clone(),
        store.clone(),
        seen.options().streaming_list(true),
    );
    meta_converged(&server, &*store).await;

    assert_eq!(lw.calls("list").len(), 1);
    assert_eq!(seen.codes(), [Some(422)]);
    assert!(
        seen.backoffs.lock().is_empty(),
        "the fallback costs no backoff"
    );
    put_labelled(&server, "b", "0").await;
    meta_converged(&server, &*store).await;
    assert_served_as_metadata(&*store);
    running.stop().await;
}
