//! Metadata informers: the factory hands out one per kind and scope next to the full ones;
//! their caches hold `PartialObjectMeta` served as `PartialObjectMetadata`, their handlers see
//! every change, transforms and managed-fields stripping apply, and a 410 relists.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use common::*;
use informer::{
    DeletedObject, InformerFactory, InformerScope, MetadataInformer, Selectors, handler,
};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::api::ApiResource;
use kube::core::PartialObjectMeta;
use parking_lot::Mutex;

/// A labelled secret with data and two managed-fields entries.
fn secret(name: &str, namespace: &str, team: &str) -> Secret {
    let mut obj = Secret::default();
    obj.metadata.name = Some(name.into());
    obj.metadata.namespace = Some(namespace.into());
    obj.metadata.labels = Some(BTreeMap::from([("team".to_owned(), team.to_owned())]));
    obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default(); 2]);
    obj.string_data = None;
    obj.data = Some(BTreeMap::from([(
        "password".to_owned(),
        k8s_openapi::ByteString(b"hunter2".to_vec()),
    )]));
    obj
}

fn names<K: informer::Object>(informer: &MetadataInformer<K>) -> Vec<String> {
    let mut names: Vec<String> = informer
        .indexer()
        .list()
        .iter()
        .filter_map(|obj| obj.metadata.name.clone())
        .collect();
    names.sort();
    names
}

/// The object came from the server as a `PartialObjectMetadata`.
fn served_as_metadata<K>(obj: &PartialObjectMeta<K>) -> bool {
    obj.types
        .as_ref()
        .is_some_and(|t| t.api_version == "meta.k8s.io/v1" && t.kind == "PartialObjectMetadata")
}

#[tokio::test]
async fn a_metadata_informer_is_shared_and_coexists_with_the_full_one() {
    if testkit::cluster::sim_only("request counts and open watches") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    for i in 0..3 {
        server.create(&secret(&format!("s-{i}"), NS, "a")).unwrap();
    }
    let factory = InformerFactory::new(server.client().unwrap());
    let full = factory.informer::<Secret>();
    let meta = factory.metadata_informer::<Secret>();
    assert!(Arc::ptr_eq(
        &meta,
        &factory.clone().metadata_informer::<Secret>()
    ));
    assert_eq!(
        factory.len(),
        2,
        "the full and the metadata informer are distinct"
    );
    assert!(meta.name().contains("metadata"), "{}", meta.name());

    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(names(&meta), ["s-0", "s-1", "s-2"]);
    assert_eq!(full.cache_size(), 3);
    for obj in meta.indexer().list() {
        // The factory drops the `types` every metadata object comes with.
        assert!(obj.types.is_none(), "{obj:?}");
        assert!(
            obj.metadata.managed_fields.is_some(),
            "not stripped unless asked"
        );
    }
    assert!(full.indexer().list().iter().all(|s| s.data.is_some()));
    assert_eq!(
        server.request_count("watch", "secrets"),
        2,
        "one streaming list per informer, going on as its watch"
    );
    assert_eq!(server.request_count("list", "secrets"), 0);
    assert_eq!(server.open_watches(), 2);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn metadata_handlers_see_adds_updates_and_deletes() {
    let server = TestCluster::start().await.unwrap();
    server.create(&secret("a", ns(), "a")).await.unwrap();
    let factory = InformerFactory::new(server.client().unwrap());
    let meta = factory.metadata_informer_in::<Secret>(InformerScope::namespace(ns()));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = |seen: &Arc<Mutex<Vec<String>>>| Arc::clone(seen);
    meta.add_event_handler(
        handler()
            .on_add({
                let seen = record(&seen);
                move |obj: Arc<PartialObjectMeta<Secret>>, initial| {
                    let name = obj.metadata.name.clone().unwrap_or_default();
                    seen.lock().push(format!("add {name} initial={initial}"));
                }
            })
            .on_update({
                let seen = record(&seen);
                move |_old, new: Arc<PartialObjectMeta<Secret>>| {
                    let team = new
                        .metadata
                        .labels
                        .as_ref()
                        .and_then(|l| l.get("team").cloned());
                    seen.lock()
                        .push(format!("update team={}", team.unwrap_or_default()));
                }
            })
            .on_delete({
                let seen = record(&seen);
                move |deleted: DeletedObject<PartialObjectMeta<Secret>>| {
                    seen.lock()
                        .push(format!("delete tombstone={}", deleted.is_tombstone()));
                }
            }),
    )
    .unwrap();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();

    server.replace(&secret("a", ns(), "b")).await.unwrap();
    server.create(&secret("c", ns(), "a")).await.unwrap();
    server.delete("", "secrets", Some(ns()), "a").await.unwrap();
    eventually("every change", Duration::from_secs(10), || {
        seen.lock().len() == 4
    })
    .await;
    let mut seen = seen.lock().clone();
    seen.sort();
    assert_eq!(
        seen,
        [
            "add a initial=true",
            "add c initial=false",
            "delete tombstone=false",
            "update team=b",
        ]
    );
    assert_eq!(names(&meta), ["c"]);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn stripping_and_transforms_apply_to_metadata_objects() {
    let server = TestCluster::start().await.unwrap();
    server.create(&secret("a", ns(), "a")).await.unwrap();
    let factory = InformerFactory::builder(server.client().unwrap())
        .strip_managed_fields(true)
        .build();
    let stripped = factory.metadata_informer_in::<Secret>(InformerScope::namespace(ns()));
    let resource = ApiResource::erase::<Secret>(&());
    let dynamic = factory.dynamic_metadata_informer(&resource, InformerScope::namespace(ns()));
    dynamic
        .set_transform(|obj: Arc<PartialObjectMeta<kube::api::DynamicObject>>| {
            let mut obj = Arc::unwrap_or_clone(obj);
            obj.metadata.annotations = Some(BTreeMap::from([("seen".into(), "yes".into())]));
            Ok(Arc::new(obj))
        })
        .unwrap();
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();

    let obj = stripped
        .indexer()
        .list()
        .pop()
        .expect("the secret is cached");
    assert!(obj.metadata.managed_fields.is_none());
    assert_eq!(obj.metadata.labels.as_ref().unwrap()["team"], "a");
    let obj = dynamic
        .indexer()
        .list()
        .pop()
        .expect("the secret is cached");
    assert!(served_as_metadata(&obj), "{obj:?}");
    assert_eq!(obj.metadata.annotations.as_ref().unwrap()["seen"], "yes");
    assert!(
        obj.metadata.managed_fields.is_some(),
        "a transform of the user's own replaces the factory's"
    );
    assert!(
        stripped
            .indexer()
            .list()
            .iter()
            .all(|obj| obj.types.is_none()),
        "the factory's own transform strips managed fields, then the type"
    );
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn scoped_metadata_informers_see_their_namespace_and_selectors_only() {
    if testkit::cluster::sim_only(
        "otherwise empty server (the test lists every namespace's Secrets)",
    ) {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    let mut other = k8s_openapi::api::core::v1::Namespace::default();
    other.metadata.name = Some("other".into());
    server.create(&other).unwrap();
    for (name, namespace, team) in [("a", NS, "a"), ("b", NS, "b"), ("c", "other", "a")] {
        server.create(&secret(name, namespace, team)).unwrap();
    }
    let factory = InformerFactory::new(server.client().unwrap());
    let in_ns = factory.metadata_informer_in::<Secret>(InformerScope::namespace(NS));
    let team_a = factory.metadata_informer_in::<Secret>(
        InformerScope::all().selectors(Selectors::new().labels("team=a")),
    );
    let cluster = factory.metadata_informer::<Secret>();
    assert_eq!(factory.len(), 3);
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(names(&in_ns), ["a", "b"]);
    assert_eq!(names(&team_a), ["a", "c"]);
    assert_eq!(names(&cluster), ["a", "b", "c"]);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn an_expired_metadata_watch_relists_into_the_informer() {
    if testkit::cluster::sim_only("fault injection") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    put(&server, "a", "0");
    let factory = InformerFactory::new(server.client().unwrap());
    let meta = factory.metadata_informer_in::<ConfigMap>(InformerScope::namespace(NS));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(meta.watch_count(), 1, "the streaming list");

    // The rewatch after the drop gets the 410; the relist is the third watch, a streaming list.
    server.fail_next(FailRule::new("watch", "configmaps", 410, 1).in_band());
    server.drop_watches();
    eventually("the relist", Duration::from_secs(30), || {
        meta.watch_count() == 3
    })
    .await;
    assert_eq!(meta.list_count(), 0);
    put(&server, "b", "0");
    remove(&server, "a");
    eventually(
        "the cache follows the server",
        Duration::from_secs(30),
        || names(&meta) == ["b"],
    )
    .await;
    assert!(meta.indexer().list().iter().all(|obj| obj.types.is_none()));
    factory.shutdown().await;
    server.shutdown().await;
}
