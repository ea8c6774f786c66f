//! Contradictory per-kind cache settings, for a typed kind, its metadata-only cache and a
//! dynamic kind: namespaces for a cluster-scoped kind, and a second transform for one
//! representation, compact storage beside a transform, two storages, each given in two
//! `ByObject`s in both orders. Building a controller that
//! watches the kind (as its primary kind or a secondary watch) fails with
//! `InvalidSettings`, and so does `Manager::start`; a controller of another kind still builds.

use std::convert::Infallible;
use std::sync::Arc;

use crate::cache_settings::{Half, marking};
use crate::common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{self, ByObject, DynamicKind, Metadata, Storage};
use controller_runtime::controller::{
    self, Action, Context, Controller, Reconciler, Request, Watch, reconciler_fn,
};
use controller_runtime::informer::Object;
use controller_runtime::manager::{self, ManagerBuilder};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{ApiResource, DynamicObject};

fn noop<T: Object>() -> impl Reconciler<T> {
    reconciler_fn(|_: Request, _: Context<T>| async { Ok::<_, Infallible>(Action::done()) })
}

/// The reason of an `InvalidSettings` error, after checking it names `kind`.
fn reason(error: &cache::Error, kind: &str) -> String {
    match error {
        cache::Error::InvalidSettings {
            kind: named,
            reason,
        } => {
            assert!(named.contains(kind), "{error}");
            reason.clone()
        }
        other => panic!("expected invalid settings for {kind}, got {other}"),
    }
}

/// With `halves` applied in both orders, a controller watching the kind `watch` makes is
/// refused, as is the manager's start, each with a reason containing `why`.
async fn refused<T: Object>(
    halves: [Half; 2],
    watch: impl Fn() -> Watch<T>,
    kind: &str,
    why: &str,
) {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let [first, second] = &halves;
    for order in [[first, second], [second, first]] {
        let manager = order[1](order[0](manager(&server))).build();
        let as_primary = Controller::new(&manager).for_(watch()).build(noop::<T>());
        let Err(controller::Error::Cache(error)) = as_primary else {
            panic!("a controller of {kind} was built: {as_primary:?}");
        };
        assert!(reason(&error, kind).contains(why), "{error}");

        let as_secondary = Controller::new(&manager)
            .for_(Watch::of::<ConfigMap>())
            .watches(watch(), |_: &T| None::<ObjectKey>)
            .build(noop::<ConfigMap>());
        let Err(controller::Error::Cache(error)) = as_secondary else {
            panic!("a controller watching {kind} was built: {as_secondary:?}");
        };
        assert!(reason(&error, kind).contains(why), "{error}");
        // The refused controller's primary handler did not stay on the ConfigMap informer.
        let config_maps = manager.cache().informers::<ConfigMap>().unwrap();
        assert_eq!(config_maps[0].listener_buffers().len(), 0);

        // The name is free again, and other kinds are fine.
        Controller::new(&manager)
            .for_(Watch::of::<ConfigMap>())
            .build(noop::<ConfigMap>())
            .unwrap();
        let started = manager.start().await;
        let Err(manager::Error::Cache(error)) = started else {
            panic!("the manager started: {started:?}");
        };
        assert!(reason(&error, kind).contains(why), "{error}");
    }
    server.shutdown().await;
}

/// `settings()` as both halves.
fn twice<T: Object>(settings: impl Fn() -> ByObject<T> + Clone + 'static) -> [Half; 2] {
    let other = settings.clone();
    [
        Box::new(move |builder: ManagerBuilder| builder.by_object(settings())),
        Box::new(move |builder: ManagerBuilder| builder.by_object(other())),
    ]
}

const CLUSTER_SCOPED: &str = "cluster-scoped";
const TRANSFORM_OF_COMPACT: &str = "a transform works on typed objects";
const TWO_STORAGES: &str = "two storages";
const TWO_TRANSFORMS: &str = "two transforms";

/// A dynamic view of a built-in kind (no CRD needed: settings are refused before any request).
fn dynamic_of(resource: ApiResource, namespaced: bool) -> DynamicKind {
    if namespaced {
        DynamicKind::namespaced(resource)
    } else {
        DynamicKind::cluster(resource)
    }
}

#[tokio::test(start_paused = true)]
async fn typed_namespaces_for_a_cluster_scoped_kind_are_refused() {
    let halves: [Half; 2] = [
        Box::new(|b: ManagerBuilder| b.by_object(ByObject::of::<Namespace>().labels("team=x"))),
        Box::new(|b: ManagerBuilder| b.by_object(ByObject::of::<Namespace>().namespaces(["n1"]))),
    ];
    refused(halves, Watch::of::<Namespace>, "Namespace", CLUSTER_SCOPED).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_namespaces_for_a_cluster_scoped_kind_are_refused() {
    let halves: [Half; 2] = [
        Box::new(|b: ManagerBuilder| b.by_object(ByObject::of::<Namespace>().labels("team=x"))),
        Box::new(|b: ManagerBuilder| {
            b.by_object(ByObject::of::<Metadata<Namespace>>().namespaces(["n1"]))
        }),
    ];
    refused(
        halves,
        Watch::of::<Metadata<Namespace>>,
        "Namespace",
        CLUSTER_SCOPED,
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_namespaces_for_a_cluster_scoped_kind_are_refused() {
    let kind = dynamic_of(ApiResource::erase::<Namespace>(&()), false);
    let (first, second) = (kind.clone(), kind.clone());
    let halves: [Half; 2] = [
        Box::new(move |b: ManagerBuilder| b.by_object(ByObject::dynamic(&first).labels("t=x"))),
        Box::new(move |b: ManagerBuilder| {
            b.by_object(ByObject::dynamic(&second).namespaces(["n1"]))
        }),
    ];
    refused(
        halves,
        move || Watch::dynamic(kind.clone()),
        "Namespace",
        CLUSTER_SCOPED,
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_second_typed_transform_is_refused() {
    let halves = twice(|| ByObject::of::<Secret>().transform(marking("again")));
    refused(halves, Watch::of::<Secret>, "Secret", TWO_TRANSFORMS).await;
}

#[tokio::test(start_paused = true)]
async fn a_second_metadata_transform_is_refused() {
    let halves = twice(|| ByObject::of::<Metadata<Secret>>().transform(marking("again")));
    refused(
        halves,
        Watch::of::<Metadata<Secret>>,
        "Secret",
        TWO_TRANSFORMS,
    )
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_second_dynamic_transform_is_refused() {
    let kind = dynamic_of(ApiResource::erase::<Secret>(&()), true);
    let settings = kind.clone();
    let halves =
        twice(move || ByObject::dynamic(&settings).transform(marking::<DynamicObject>("again")));
    refused(
        halves,
        move || Watch::dynamic(kind.clone()),
        "Secret",
        TWO_TRANSFORMS,
    )
    .await;
}

/// One transform per representation is not a contradiction: the full and the metadata cache of
/// one kind may each have theirs.
#[tokio::test(start_paused = true)]
async fn one_transform_per_representation_is_accepted() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(
        manager(&server)
            .by_object(ByObject::of::<Secret>().transform(marking("full")))
            .by_object(ByObject::of::<Metadata<Secret>>().transform(marking("metadata")))
            .build(),
    );
    Controller::new(&manager)
        .for_(Watch::of::<Secret>())
        .watches(Watch::of::<Metadata<Secret>>(), |_: &_| None::<ObjectKey>)
        .build(noop::<Secret>())
        .unwrap();
    let running = spawn(&manager);
    eventually(
        "the caches synced",
        std::time::Duration::from_secs(30),
        || manager.has_synced(),
    )
    .await;
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn compact_storage_with_a_transform_is_refused() {
    let halves: [Half; 2] = [
        Box::new(|b: ManagerBuilder| {
            b.by_object(ByObject::of::<Secret>().transform(marking::<Secret>("t")))
        }),
        Box::new(|b: ManagerBuilder| {
            b.by_object(ByObject::of::<Secret>().storage(Storage::compact()))
        }),
    ];
    refused(halves, Watch::of::<Secret>, "Secret", TRANSFORM_OF_COMPACT).await;
}

#[tokio::test(start_paused = true)]
async fn two_storages_are_refused() {
    let halves = twice(|| ByObject::of::<Secret>().storage(Storage::typed()));
    refused(halves, Watch::of::<Secret>, "Secret", TWO_STORAGES).await;
}
