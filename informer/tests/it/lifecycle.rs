//! The informer's one-shot life: settings fixed at start, handlers added and removed around it,
//! and accessors.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use informer::FifoKind;
use informer::{Error, FilteringHandler, Indexers, strip_managed_fields, wait_for_cache_sync};
use k8s_openapi::api::core::v1::ConfigMap;

async fn settings_handlers_and_accessors_follow_the_informer_life(kind: FifoKind) {
    let server = TestCluster::start().await.unwrap();
    server.put_own("cm-0", "0").await.unwrap();
    server.put_own("keep-1", "0").await.unwrap();
    let informer = config_map_informer::<ConfigMap>(&server, Duration::ZERO, kind);
    informer.set_transform(strip_managed_fields).unwrap();
    let everything = Recorder::new("everything");
    let kept = Recorder::new("kept");
    let all = informer.add_event_handler(everything.clone()).unwrap();
    let filtered = informer
        .add_event_handler(FilteringHandler::new(
            |cm: &ConfigMap| {
                cm.metadata
                    .name
                    .as_deref()
                    .is_some_and(|n| n.starts_with("keep"))
            },
            kept.clone(),
        ))
        .unwrap();
    assert!(!informer.has_started() && !informer.has_synced());
    assert_eq!(informer.last_sync_resource_version(), "");
    assert_eq!(informer.last_store_sync_resource_version(), "");
    assert_eq!(informer.fifo_kind(), kind);

    let running = spawn(&informer);
    tokio::time::timeout(
        Duration::from_secs(30),
        wait_for_cache_sync(&[informer.as_ref(), &all, &filtered]),
    )
    .await
    .unwrap();
    assert!(informer.has_started());
    assert!(matches!(
        informer.set_transform(strip_managed_fields),
        Err(Error::AlreadyStarted("set_transform"))
    ));
    // Objects from the server carry managed fields; the transform dropped them.
    assert!(
        informer
            .indexer()
            .list()
            .iter()
            .all(|cm| cm.metadata.managed_fields.is_none())
    );
    assert_eq!(kept.events().len(), 1);
    assert!(!informer.last_sync_resource_version().is_empty());
    assert!(!informer.last_store_sync_resource_version().is_empty());

    // Indices can still be added to the running informer.
    informer
        .add_indexers(Indexers::new().with("by-value", |cm: &ConfigMap| {
            cm.data.iter().flat_map(|d| d.values().cloned()).collect()
        }))
        .unwrap();
    assert_eq!(
        informer.indexer().by_index("by-value", "0").unwrap().len(),
        2
    );
    assert_eq!(
        informer
            .lister()
            .namespace(ns())
            .get("cm-0")
            .map(|cm| rv(&cm)),
        Some(cache_state(&informer)["cm-0"].clone())
    );

    // Removing is idempotent and stops delivery.
    informer.remove_event_handler(&all).unwrap();
    informer.remove_event_handler_and_wait(&all).await.unwrap();
    assert!(all.is_removed());
    server.put_own("keep-2", "0").await.unwrap();
    eventually(
        "the filtered handler saw the add",
        Duration::from_secs(30),
        || kept.len() == 2,
    )
    .await;
    assert_eq!(everything.len(), 2);
    // A rename out of the filter is a delete for the filtered handler.
    server.put_own("keep-2", "1").await.unwrap();
    eventually("the filtered update", Duration::from_secs(30), || {
        kept.len() == 3
    })
    .await;
    assert!(matches!(&kept.events()[2], Event::Update(name, ..) if name == "keep-2"));

    // A registration from another informer is refused.
    let other = config_map_informer::<ConfigMap>(&server, Duration::ZERO, kind);
    let foreign = other.add_event_handler(Recorder::new("foreign")).unwrap();
    assert!(matches!(
        informer.remove_event_handler(&foreign),
        Err(Error::ForeignRegistration)
    ));

    running.stop().await;
    assert!(informer.is_stopped());
    assert!(matches!(
        informer.add_event_handler(Recorder::new("late")),
        Err(Error::Stopped)
    ));
    // Running again is a no-op.
    informer
        .run(tokio_util::sync::CancellationToken::new())
        .await;
    let _ = Arc::clone(&informer);
    server.shutdown().await;
}

on_both_fifos!(
    settings_handlers_and_accessors_follow_the_informer_life,
    start_paused = true
);

async fn an_informer_built_from_a_lister_watcher_keeps_its_indices_and_name(kind: FifoKind) {
    let server = TestCluster::start().await.unwrap();
    server.put_own("a", "x").await.unwrap();
    server.put_own("b", "y").await.unwrap();
    server.put_own("c", "x").await.unwrap();
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(server.client().unwrap(), ns());
    let lister_watcher = Arc::new(informer::ApiListerWatcher::new(api).labels(OWN_SELECTOR));
    let informer = Arc::new(
        informer::SharedIndexInformer::builder(lister_watcher)
            .fifo(kind)
            .indexers(Indexers::new().with("by-value", |cm: &ConfigMap| {
                cm.data.iter().flat_map(|d| d.values().cloned()).collect()
            }))
            .reflector_options(
                informer::ReflectorOptions::default()
                    .streaming_list(false)
                    .page_size(2),
            )
            .name("config maps by value")
            .build(),
    );
    assert_eq!(informer.name(), "config maps by value");
    let running = spawn(&informer);
    informer.synced().await;

    let mut by_x: Vec<String> = informer
        .indexer()
        .by_index("by-value", "x")
        .unwrap()
        .iter()
        .map(|cm| name(cm))
        .collect();
    by_x.sort();
    assert_eq!(by_x, ["a", "c"]);
    assert_eq!(cache_state(&informer), server.own_state().await.unwrap());
    // Three objects in pages of two: two list requests.
    assert_eq!(informer.list_count(), 2);
    // The index follows live changes.
    server.put_own("b", "x").await.unwrap();
    eventually("the index follows", Duration::from_secs(30), || {
        informer
            .indexer()
            .by_index("by-value", "x")
            .is_ok_and(|objects| objects.len() == 3)
    })
    .await;

    running.stop().await;
    server.shutdown().await;
}

on_both_fifos!(
    an_informer_built_from_a_lister_watcher_keeps_its_indices_and_name,
    start_paused = true
);
