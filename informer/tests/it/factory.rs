//! A factory hands out one shared informer per type and scope, and the server sees
//! one watch for it. Also: dynamic informers, sync timeouts that name the informer, shutdown.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use informer::{Error, InformerFactory, InformerScope, Selectors};
use k8s_openapi::api::core::v1::{ConfigMap, Container, Pod, PodSpec};
use kube::api::{ApiResource, ObjectMeta};
use testkit::fault::InjectFaults;

fn pod(name: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns().into()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("busybox".into()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

#[tokio::test]
async fn two_requests_for_pods_share_one_informer_and_one_watch() {
    let server = TestCluster::start_with_faults().await.unwrap();
    for i in 0..5 {
        server.create(&pod(&format!("pod-{i}"))).await.unwrap();
    }
    let factory = InformerFactory::new(server.client().unwrap());
    let first = factory.informer_in::<Pod>(InformerScope::namespace(ns()));
    // A second controller, through a clone of the factory.
    let second = factory
        .clone()
        .informer_in::<Pod>(InformerScope::namespace(ns()));
    assert!(Arc::ptr_eq(&first, &second));
    assert_eq!(factory.len(), 1);

    let added = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let registration = first
        .add_event_handler(informer::handler().on_add({
            let added = added.clone();
            move |_: Arc<Pod>, _| {
                added.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }))
        .unwrap();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(first.cache_size(), 5);
    assert_eq!(second.cache_size(), 5);
    registration.synced().await;
    assert_eq!(added.load(std::sync::atomic::Ordering::SeqCst), 5);
    eventually("the watch is open", Duration::from_secs(30), || {
        server.request_count("watch", "pods") >= 1
    })
    .await;
    // The server saw one streaming list, which went on as the watch, for both requests.
    assert_eq!(server.request_count("watch", "pods"), 1);
    assert_eq!(server.request_count("list", "pods"), 0);
    assert!(!first.last_sync_resource_version().is_empty());

    factory.shutdown().await;
    assert!(first.is_stopped());
    // Shutting down twice is fine; starting afterwards does nothing.
    factory.shutdown().await;
    factory.start();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn wait_for_cache_sync_names_the_informers_that_did_not_sync() {
    let server = TestCluster::start().await.unwrap();
    server.put_own("cm-0", "0").await.unwrap();
    // Every informer selects the test's own objects: the one of every namespace too.
    let factory = InformerFactory::builder(server.client().unwrap())
        .selectors(Selectors::new().labels(OWN_SELECTOR))
        .default_resync(Duration::from_secs(30))
        .resync_for::<ConfigMap>(Duration::from_secs(5))
        .build();
    let config_maps = factory.informer::<ConfigMap>();
    // Another scope of the same type is another informer.
    let namespaced = factory.informer_in::<ConfigMap>(InformerScope::namespace(ns()));
    assert!(!Arc::ptr_eq(&config_maps, &namespaced));
    assert_ne!(config_maps.name(), namespaced.name());
    // A resource the server does not serve: its lists fail forever.
    let widgets = ApiResource {
        group: "example.com".into(),
        version: "v1".into(),
        api_version: "example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let dynamic = factory.dynamic_informer(&widgets, InformerScope::namespace(ns()));
    assert!(Arc::ptr_eq(
        &dynamic,
        &factory.dynamic_informer(&widgets, InformerScope::namespace(ns()))
    ));
    factory.start();

    // Long enough for the others to sync, on a real server too.
    let error = factory
        .wait_for_cache_sync(Duration::from_secs(3))
        .await
        .unwrap_err();
    match &error {
        Error::NotSynced { unsynced, .. } => {
            assert_eq!(unsynced, &[dynamic.name().to_owned()]);
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(error.to_string().contains("Widget"), "{error}");
    assert!(config_maps.has_synced() && namespaced.has_synced());
    assert_eq!(config_maps.cache_size(), 1);
    assert_eq!(factory.len(), 3);

    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn dynamic_informers_cache_objects_of_a_runtime_resource() {
    let server = TestCluster::start().await.unwrap();
    server.put_own("cm-0", "0").await.unwrap();
    server.put_own("cm-1", "0").await.unwrap();
    let factory = InformerFactory::builder(server.client().unwrap())
        .strip_managed_fields(true)
        .build();
    let resource = ApiResource::erase::<ConfigMap>(&());
    let own = Selectors::new().labels(OWN_SELECTOR);
    let dynamic =
        factory.dynamic_informer(&resource, InformerScope::namespace(ns()).selectors(own));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    let mut names: Vec<String> = dynamic
        .indexer()
        .list()
        .iter()
        .map(|obj| obj.metadata.name.clone().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["cm-0", "cm-1"]);
    assert!(
        dynamic
            .indexer()
            .list()
            .iter()
            .all(|obj| obj.metadata.managed_fields.is_none())
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn selectors_are_part_of_what_makes_an_informer_shared() {
    let server = TestCluster::start().await.unwrap();
    for (name, app) in [("a", "web"), ("b", "web"), ("c", "db")] {
        let mut obj = own_cm(name, "0");
        obj.metadata
            .labels
            .get_or_insert_default()
            .insert("app".to_string(), app.to_string());
        server.create(&obj).await.unwrap();
    }
    let factory = InformerFactory::new(server.client().unwrap());
    let web = factory.informer_in::<ConfigMap>(
        InformerScope::namespace(ns()).selectors(Selectors::new().labels("app=web")),
    );
    let again = factory.informer_in::<ConfigMap>(
        InformerScope::namespace(ns()).selectors(Selectors::new().labels("app=web")),
    );
    let db = factory.informer_in::<ConfigMap>(
        InformerScope::namespace(ns()).selectors(Selectors::new().labels("app=db")),
    );
    let everything = factory.informer_in::<ConfigMap>(InformerScope::namespace(ns()));
    assert!(Arc::ptr_eq(&web, &again));
    assert!(!Arc::ptr_eq(&web, &db));
    assert!(Arc::ptr_eq(
        &everything,
        &factory.informer_in::<ConfigMap>(InformerScope::namespace(ns()))
    ));
    assert_eq!(factory.len(), 3);
    assert!(web.name().contains("labels=app=web"), "{}", web.name());

    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(web.cache_size(), 2);
    assert_eq!(db.cache_size(), 1);
    // The unselected informer holds the namespace's every ConfigMap: the three, and on a whole
    // cluster those its controllers put there (the root CA's).
    let mut own: Vec<String> = everything
        .indexer()
        .list()
        .iter()
        .filter(|obj| is_own(obj))
        .map(|obj| name(obj))
        .collect();
    own.sort();
    assert_eq!(own, ["a", "b", "c"]);
    testkit::eventually_async(
        "the unselected informer to hold the namespace's every ConfigMap",
        Duration::from_secs(30),
        || async {
            let listed = server.list::<ConfigMap>().await.unwrap();
            cache_state(&everything) == state_of(&listed)
        },
    )
    .await;
    factory.shutdown().await;
    server.shutdown().await;
}

/// Counts a handler's resync notifications (an update whose old and new are the same object).
fn count_resyncs<K: Send + Sync + 'static>(
    counter: &Arc<std::sync::atomic::AtomicUsize>,
) -> informer::HandlerFuncs<K> {
    let counter = Arc::clone(counter);
    informer::handler().on_update(move |old: Arc<K>, new: Arc<K>| {
        if Arc::ptr_eq(&old, &new) {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    })
}

#[tokio::test(start_paused = true)]
async fn informers_resync_at_the_default_period_unless_their_type_overrides_it() {
    let server = TestCluster::start().await.unwrap();
    server.put_own("cm-0", "0").await.unwrap();
    server.create(&pod("pod-0")).await.unwrap();
    let factory = InformerFactory::builder(server.client().unwrap())
        .selectors(Selectors::new().labels(OWN_SELECTOR))
        .default_resync(Duration::from_secs(1))
        .resync_for::<Pod>(Duration::ZERO)
        .build();
    let config_map_resyncs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let pod_resyncs = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    factory
        .informer_in::<ConfigMap>(InformerScope::namespace(ns()))
        .add_event_handler(count_resyncs(&config_map_resyncs))
        .unwrap();
    // Every pod of the namespace (the test's one has no label): a pod's status changes on a
    // whole cluster are updates, never resyncs.
    factory
        .informer_in::<Pod>(InformerScope::namespace(ns()).selectors(Selectors::new()))
        .add_event_handler(count_resyncs(&pod_resyncs))
        .unwrap();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();

    // Config maps take the factory's 1 s default: several resyncs within 10 s.
    eventually("config map resyncs", Duration::from_secs(10), || {
        config_map_resyncs.load(std::sync::atomic::Ordering::SeqCst) >= 3
    })
    .await;
    // Pods are overridden to never resync, while config maps go on resyncing: three more
    // rounds of theirs, and not one of the pods'.
    let before = config_map_resyncs.load(std::sync::atomic::Ordering::SeqCst);
    eventually(
        "three more config map resyncs",
        Duration::from_secs(10),
        || config_map_resyncs.load(std::sync::atomic::Ordering::SeqCst) >= before + 3,
    )
    .await;
    assert_eq!(pod_resyncs.load(std::sync::atomic::Ordering::SeqCst), 0);

    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_removed_informer_stops_alone_and_a_new_request_gets_a_new_one() {
    let server = TestCluster::start().await.unwrap();
    let factory = InformerFactory::new(server.client().unwrap());
    let pods = factory.informer::<Pod>();
    let config_maps = factory.informer::<ConfigMap>();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();

    assert!(factory.remove(&pods));
    assert!(!factory.remove(&pods), "already removed");
    eventually(
        "the removed informer stopped",
        Duration::from_secs(30),
        || pods.is_stopped(),
    )
    .await;
    assert!(!config_maps.is_stopped());
    assert_eq!(factory.len(), 1);

    let again = factory.informer::<Pod>();
    assert!(!Arc::ptr_eq(&again, &pods));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert!(again.has_synced());
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_factory_runs_its_informers_on_the_fifo_it_was_given() {
    let server = TestCluster::start().await.unwrap();
    server.put("a", "0").await.unwrap();
    server.put("b", "0").await.unwrap();
    let factory = InformerFactory::builder(server.client().unwrap())
        .fifo(informer::FifoKind::InOrder)
        .build();
    let config_maps = factory.informer_in::<ConfigMap>(InformerScope::namespace(ns()));
    assert_eq!(config_maps.fifo_kind(), informer::FifoKind::InOrder);
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(cache_state(&config_maps), server.state().await.unwrap());
    factory.shutdown().await;
    server.shutdown().await;
}

/// A compact informer from the factory: shared per type and scope like any other, beside the
/// typed informer of the same kind (a distinct informer); read typed through a
/// `CompactLister`, it holds what the typed one holds (but `managedFields`, which its codec
/// drops).
#[tokio::test]
async fn a_compact_informer_reads_as_the_typed_one_of_the_same_kind() {
    use indexer::compact::{Codec, CodecOptions, CompactLister};

    let server = TestCluster::start().await.unwrap();
    for i in 0..5 {
        server.create(&pod(&format!("pod-{i}"))).await.unwrap();
    }
    let factory = InformerFactory::new(server.client().unwrap());
    let codec = Codec::new(CodecOptions::new());
    let compact = factory.compact_informer_in::<Pod>(InformerScope::namespace(ns()), &codec);
    let again = factory.compact_informer_in::<Pod>(InformerScope::namespace(ns()), &codec);
    assert!(Arc::ptr_eq(&compact, &again));
    let typed = factory.informer_in::<Pod>(InformerScope::namespace(ns()));
    assert_eq!(factory.len(), 2);
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();

    let lister = CompactLister::new(compact.indexer().clone());
    let mut read: Vec<Arc<Pod>> = lister.namespace(ns()).list(&Default::default());
    // The codec drops managedFields (a real server writes them; the typed informer keeps them).
    let mut expected: Vec<Arc<Pod>> = typed
        .indexer()
        .list()
        .into_iter()
        .map(|pod| {
            let mut pod = Arc::unwrap_or_clone(pod);
            pod.metadata.managed_fields = None;
            Arc::new(pod)
        })
        .collect();
    read.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    expected.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    assert_eq!(read.len(), 5);
    assert_eq!(read, expected);
    assert!(
        compact
            .indexer()
            .list()
            .iter()
            .all(|obj| obj.decoded().is_none())
    );
    factory.shutdown().await;
    server.shutdown().await;
}
