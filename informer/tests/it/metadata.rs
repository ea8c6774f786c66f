//! Metadata informers: the factory hands out one per kind and scope next to the full ones;
//! their caches hold `PartialObjectMeta` served as `PartialObjectMetadata`, their handlers see
//! every change, transforms and managed-fields stripping apply, and a 410 relists.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use informer::{
    DeletedObject, InformerFactory, InformerScope, MetadataInformer, Selectors, handler,
};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::api::ApiResource;
use kube::core::PartialObjectMeta;
use parking_lot::Mutex;
use testkit::fault::InjectFaults;

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
    names_where(informer, |_| true)
}

/// The names of the objects in `namespaces` an informer caches, sorted.
fn names_in<K: informer::Object>(
    informer: &MetadataInformer<K>,
    namespaces: &[&str],
) -> Vec<String> {
    names_where(informer, |obj| {
        namespaces.contains(&obj.metadata.namespace.as_deref().unwrap_or_default())
    })
}

/// The names of the objects an informer caches that `keep` keeps, sorted.
fn names_where<K: informer::Object>(
    informer: &MetadataInformer<K>,
    keep: impl Fn(&PartialObjectMeta<K>) -> bool,
) -> Vec<String> {
    let mut names: Vec<String> = informer
        .indexer()
        .list()
        .iter()
        .filter(|obj| keep(obj))
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
    let server = TestCluster::start_with_faults().await.unwrap();
    for i in 0..3 {
        server
            .create(&secret(&format!("s-{i}"), ns(), "a"))
            .await
            .unwrap();
    }
    let factory = InformerFactory::new(server.client().unwrap());
    let scope = || InformerScope::namespace(ns());
    let full = factory.informer_in::<Secret>(scope());
    let meta = factory.metadata_informer_in::<Secret>(scope());
    assert!(Arc::ptr_eq(
        &meta,
        &factory.clone().metadata_informer_in::<Secret>(scope())
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
    let server = TestCluster::start().await.unwrap();
    // A namespace of the test's own next to `ns()` (deleted with the cluster's cleanup).
    let other_name = format!("{}-other", ns());
    let mut other = k8s_openapi::api::core::v1::Namespace::default();
    other.metadata.name = Some(other_name.clone());
    server.create(&other).await.unwrap();
    for (name, namespace, team) in [("a", ns(), "a"), ("b", ns(), "b"), ("c", &other_name, "a")] {
        server.create(&secret(name, namespace, team)).await.unwrap();
    }
    let factory = InformerFactory::new(server.client().unwrap());
    let in_ns = factory.metadata_informer_in::<Secret>(InformerScope::namespace(ns()));
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
    // The informers of every namespace hold the test's two namespaces' objects (on a shared
    // cluster, others' too: those are not compared).
    let ours = [ns(), other_name.as_str()];
    assert_eq!(names(&in_ns), ["a", "b"]);
    assert_eq!(names_in(&team_a, &ours), ["a", "c"]);
    assert_eq!(names_in(&cluster, &ours), ["a", "b", "c"]);
    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn an_expired_metadata_watch_relists_into_the_informer() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let factory = InformerFactory::new(server.client().unwrap());
    let own = Selectors::new().labels(OWN_SELECTOR);
    let meta =
        factory.metadata_informer_in::<ConfigMap>(InformerScope::namespace(ns()).selectors(own));
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(meta.watch_count(), 1, "the streaming list");

    // The rewatch after the drop gets the 410; the relist is the third watch, a streaming list.
    server
        .inject(FailRule::new("watch", "configmaps", 410, 1).in_band())
        .unwrap();
    server.drop_watches();
    eventually("the relist", Duration::from_secs(30), || {
        meta.watch_count() == 3
    })
    .await;
    assert_eq!(meta.list_count(), 0);
    server.put_own("b", "0").await.unwrap();
    server.remove("a").await.unwrap();
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
