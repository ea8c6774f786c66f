//! Per-kind cache settings in combination: for a typed kind (Secrets), its metadata-only cache
//! (`Metadata<Secret>`) and a dynamic kind (a CRD), each of namespaces, label selectors, field
//! selectors and a transform is given in two `ByObject`s, in both orders; the cache then holds
//! exactly the expected objects, read through its lister after syncing from the simulator, and
//! both orders cache the same. (Contradictory settings: `invalid_settings.rs`.)

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::ApiServer;
use common::*;
use controller_runtime::cache::{ByObject, Cache, DynamicKind, Metadata};
use controller_runtime::informer::Object;
use controller_runtime::manager::ManagerBuilder;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DynamicObject, ObjectMeta, PostParams};
use kube::core::{PartialObjectMeta, Selector};
use kube::{Api, CustomResource, CustomResourceExt, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(30);
const NAMESPACES: [&str; 3] = ["n1", "n2", "n3"];

/// Only here to generate the CRD; the manager caches Sprockets as `DynamicObject`s.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "settings.kube-rt.dev",
    version = "v1",
    kind = "Sprocket",
    namespaced
)]
pub struct SprocketSpec {
    teeth: i64,
}

/// The objects in each namespace, with their labels.
const OBJECTS: [(&str, &[(&str, &str)]); 5] = [
    ("web-db", &[("app", "web"), ("tier", "db")]),
    ("web", &[("app", "web")]),
    ("db", &[("tier", "db")]),
    ("skip-a", &[("app", "web"), ("tier", "db")]),
    ("skip-b", &[("app", "web"), ("tier", "db")]),
];

/// One representation of a kind, as cached and configured.
#[derive(Clone)]
enum Representation {
    /// Secrets, in full.
    Typed,
    /// Secrets' metadata.
    Metadata,
    /// Sprockets, as dynamic objects.
    Dynamic(DynamicKind),
}

/// The setting under test.
#[derive(Clone, Copy, Debug)]
enum Setting {
    Namespaces,
    Labels,
    Fields,
    Transform,
}

/// One `by_object` call on a manager builder.
pub(crate) type Half = Box<dyn Fn(ManagerBuilder) -> ManagerBuilder>;

/// A transform that marks each object with the annotation `mark: <by>`.
pub(crate) fn marking<T: Object>(
    by: &'static str,
) -> impl Fn(Arc<T>) -> Result<Arc<T>, Box<dyn std::error::Error + Send + Sync>> + Send + Sync + 'static
{
    move |object| {
        let mut object = Arc::unwrap_or_clone(object);
        object
            .meta_mut()
            .annotations
            .get_or_insert_default()
            .insert("mark".to_owned(), by.to_owned());
        Ok(Arc::new(object))
    }
}

/// The two `ByObject`s that give `setting`, for the settings `of` makes: two namespaces, two
/// label selectors, two field selectors, or a transform and a namespace.
fn halves<T: Object>(
    of: impl Fn() -> ByObject<T> + Clone + 'static,
    setting: Setting,
) -> [Half; 2] {
    type Change<T> = fn(ByObject<T>) -> ByObject<T>;
    let (first, second): (Change<T>, Change<T>) = match setting {
        Setting::Namespaces => (|b| b.namespaces(["n1"]), |b| b.namespaces(["n2"])),
        Setting::Labels => (|b| b.labels("app=web"), |b| b.labels("tier=db")),
        Setting::Fields => (
            |b| b.fields("metadata.name!=skip-a"),
            |b| b.fields("metadata.name!=skip-b"),
        ),
        Setting::Transform => (|b| b.transform(marking("yes")), |b| b.namespaces(["n1"])),
    };
    let other = of.clone();
    [
        Box::new(move |builder: ManagerBuilder| builder.by_object(first(of()))),
        Box::new(move |builder: ManagerBuilder| builder.by_object(second(other()))),
    ]
}

/// Every cached object's `namespace/name`, with its `mark` annotation if any.
fn entries<T: Resource>(objects: Vec<Arc<T>>) -> BTreeMap<String, Option<String>> {
    objects
        .iter()
        .map(|object| {
            let meta = object.meta();
            let key = format!(
                "{}/{}",
                meta.namespace.as_deref().unwrap_or_default(),
                meta.name.as_deref().unwrap_or_default()
            );
            let mark = meta
                .annotations
                .as_ref()
                .and_then(|a| a.get("mark"))
                .cloned();
            (key, mark)
        })
        .collect()
}

impl Representation {
    fn halves(&self, setting: Setting) -> [Half; 2] {
        match self {
            Self::Typed => halves(ByObject::of::<Secret>, setting),
            Self::Metadata => halves(ByObject::of::<Metadata<Secret>>, setting),
            Self::Dynamic(kind) => {
                let kind = kind.clone();
                halves(move || ByObject::dynamic(&kind), setting)
            }
        }
    }

    /// Registers the representation's cache, so the manager starts its informers.
    fn register(&self, cache: &Cache) {
        match self {
            Self::Typed => drop(cache.informers::<Secret>().unwrap()),
            Self::Metadata => drop(cache.informers::<Metadata<Secret>>().unwrap()),
            Self::Dynamic(kind) => drop(cache.dynamic_informers(kind).unwrap()),
        }
    }

    /// What the representation's cache holds.
    fn cached(&self, cache: &Cache) -> BTreeMap<String, Option<String>> {
        let all = Selector::default();
        match self {
            Self::Typed => entries(cache.lister::<Secret>().unwrap().list(&all)),
            Self::Metadata => {
                let objects: Vec<Arc<PartialObjectMeta<Secret>>> =
                    cache.lister::<Metadata<Secret>>().unwrap().list(&all);
                entries(objects)
            }
            Self::Dynamic(kind) => entries(cache.dynamic_lister(kind).unwrap().list(&all)),
        }
    }
}

/// A simulator holding the namespaces, and [`OBJECTS`] in each as Secrets and as Sprockets.
async fn seeded() -> (ApiServer, DynamicKind) {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let sprockets = install(&server, &Sprocket::crd()).await;
    for namespace in NAMESPACES {
        let mut object = Namespace::default();
        object.metadata.name = Some(namespace.to_owned());
        server.create(&object).unwrap();
        for (name, labels) in OBJECTS {
            let metadata = ObjectMeta {
                name: Some(name.to_owned()),
                namespace: Some(namespace.to_owned()),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| ((*k).into(), (*v).into()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            };
            let secret = Secret {
                metadata: metadata.clone(),
                ..Secret::default()
            };
            server.create(&secret).unwrap();
            let mut sprocket = DynamicObject::new(name, sprockets.resource()).within(namespace);
            sprocket.metadata = metadata;
            sprocket.data = json!({"spec": {"teeth": 12}});
            Api::<DynamicObject>::namespaced_with(client.clone(), namespace, sprockets.resource())
                .create(&PostParams::default(), &sprocket)
                .await
                .unwrap();
        }
    }
    (server, sprockets)
}

/// Runs a manager with `halves` applied in this order, and returns what the cache of
/// `representation` held once synced.
async fn cache_after(
    server: &ApiServer,
    representation: &Representation,
    halves: [&Half; 2],
) -> BTreeMap<String, Option<String>> {
    let builder = halves[1](halves[0](manager(server)));
    let manager = Arc::new(builder.build());
    representation.register(&manager.cache());
    let running = spawn(&manager);
    eventually("the cache synced", LIMIT, || manager.has_synced()).await;
    let cached = representation.cached(&manager.cache());
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    cached
}

/// What each setting's two halves must leave in the cache: `namespace/name` and mark.
fn expected(setting: Setting) -> BTreeMap<String, Option<String>> {
    let mut expected = BTreeMap::new();
    for namespace in NAMESPACES {
        for (name, labels) in OBJECTS {
            let both_labels = labels.len() == 2;
            let kept = match setting {
                Setting::Namespaces => namespace != "n3",
                Setting::Labels => both_labels,
                Setting::Fields => !name.starts_with("skip-"),
                Setting::Transform => namespace == "n1",
            };
            if kept {
                let mark = matches!(setting, Setting::Transform).then(|| "yes".to_owned());
                expected.insert(format!("{namespace}/{name}"), mark);
            }
        }
    }
    expected
}

/// The setting given in two `ByObject`s caches the expected objects, in either order.
async fn combines(representation: fn(DynamicKind) -> Representation, setting: Setting) {
    if testkit::cluster::sim_only("otherwise empty server (the caches span every namespace)") {
        return;
    }
    let (server, sprockets) = seeded().await;
    let representation = representation(sprockets);
    let [first, second] = representation.halves(setting);
    let forward = cache_after(&server, &representation, [&first, &second]).await;
    let backward = cache_after(&server, &representation, [&second, &first]).await;
    assert_eq!(forward, expected(setting), "{setting:?}, first then second");
    assert_eq!(
        backward, forward,
        "{setting:?}: the order changed the cache"
    );
    server.shutdown().await;
}

fn typed(_: DynamicKind) -> Representation {
    Representation::Typed
}

fn metadata(_: DynamicKind) -> Representation {
    Representation::Metadata
}

#[tokio::test(start_paused = true)]
async fn typed_namespaces_combine() {
    combines(typed, Setting::Namespaces).await;
}

#[tokio::test(start_paused = true)]
async fn typed_labels_combine() {
    combines(typed, Setting::Labels).await;
}

#[tokio::test(start_paused = true)]
async fn typed_fields_combine() {
    combines(typed, Setting::Fields).await;
}

#[tokio::test(start_paused = true)]
async fn typed_transform_combines() {
    combines(typed, Setting::Transform).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_namespaces_combine() {
    combines(metadata, Setting::Namespaces).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_labels_combine() {
    combines(metadata, Setting::Labels).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_fields_combine() {
    combines(metadata, Setting::Fields).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_transform_combines() {
    combines(metadata, Setting::Transform).await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_namespaces_combine() {
    combines(Representation::Dynamic, Setting::Namespaces).await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_labels_combine() {
    combines(Representation::Dynamic, Setting::Labels).await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_fields_combine() {
    combines(Representation::Dynamic, Setting::Fields).await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_transform_combines() {
    combines(Representation::Dynamic, Setting::Transform).await;
}

/// A transform belongs to the representation it is typed over: the full and metadata caches
/// of one kind each show their own, whichever was given first; namespaces given through
/// either apply to both.
#[tokio::test(start_paused = true)]
async fn each_representation_of_a_kind_keeps_its_own_transform_in_either_order() {
    if testkit::cluster::sim_only("otherwise empty server (the caches span every namespace)") {
        return;
    }
    let (server, _) = seeded().await;
    let full: Half = Box::new(|builder: ManagerBuilder| {
        builder.by_object(ByObject::of::<Secret>().transform(marking("full")))
    });
    let meta: Half = Box::new(|builder: ManagerBuilder| {
        builder.by_object(
            ByObject::of::<Metadata<Secret>>()
                .namespaces(["n2"])
                .transform(marking("metadata")),
        )
    });
    for order in [[&full, &meta], [&meta, &full]] {
        let marks = |mark: &str| -> BTreeMap<String, Option<String>> {
            OBJECTS
                .iter()
                .map(|(name, _)| (format!("n2/{name}"), Some(mark.to_owned())))
                .collect()
        };
        let typed = cache_after(&server, &Representation::Typed, order).await;
        assert_eq!(typed, marks("full"));
        let metadata = cache_after(&server, &Representation::Metadata, order).await;
        assert_eq!(metadata, marks("metadata"));
    }
    server.shutdown().await;
}
