//! Per-kind cache settings in combination: for a typed kind (Secrets), its metadata-only cache
//! (`Metadata<Secret>`) and a dynamic kind (a CRD), each of namespaces, label selectors, field
//! selectors and a transform is given in two `ByObject`s, in both orders; the cache then holds
//! exactly the expected objects, read through its lister after syncing, and both orders cache
//! the same. (Contradictory settings: `invalid_settings.rs`.) Runs on the simulator and, with
//! `KUBE_RT_TEST_KUBECONFIG` set, against that cluster: each test seeds three namespaces of its
//! own, and the caches, which span every namespace, are compared in those.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use controller_runtime::cache::{ByObject, Cache, DynamicKind, Metadata};
use controller_runtime::informer::Object;
use controller_runtime::manager::{Manager, ManagerBuilder};
use k8s_openapi::api::core::v1::{Namespace, Secret};
use kube::api::{DynamicObject, ObjectMeta, PostParams};
use kube::core::{PartialObjectMeta, Selector};
use kube::{Api, CustomResource, CustomResourceExt, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(30);

/// Seeded namespaces so far in this process (each test seeds three of its own: on a real
/// cluster a namespace deleted by an earlier test may still be terminating).
static SEEDED: AtomicUsize = AtomicUsize::new(0);

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

/// The two `ByObject`s that give `setting`, for the settings `of` makes: two of the seeded
/// `namespaces`, two label selectors, two field selectors, or a transform and a namespace.
fn halves<T: Object>(
    of: impl Fn() -> ByObject<T> + Clone + 'static,
    setting: Setting,
    namespaces: &[String; 3],
) -> [Half; 2] {
    type Change<T> = Box<dyn Fn(ByObject<T>) -> ByObject<T>>;
    let in_namespace = |namespace: &String| -> Change<T> {
        let namespace = namespace.clone();
        Box::new(move |b| b.namespaces([namespace.clone()]))
    };
    let (first, second): (Change<T>, Change<T>) = match setting {
        Setting::Namespaces => (in_namespace(&namespaces[0]), in_namespace(&namespaces[1])),
        Setting::Labels => (
            Box::new(|b| b.labels("app=web")),
            Box::new(|b| b.labels("tier=db")),
        ),
        Setting::Fields => (
            Box::new(|b| b.fields("metadata.name!=skip-a")),
            Box::new(|b| b.fields("metadata.name!=skip-b")),
        ),
        Setting::Transform => (
            Box::new(|b| b.transform(marking("yes"))),
            in_namespace(&namespaces[0]),
        ),
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
    fn halves(&self, setting: Setting, namespaces: &[String; 3]) -> [Half; 2] {
        match self {
            Self::Typed => halves(ByObject::of::<Secret>, setting, namespaces),
            Self::Metadata => halves(ByObject::of::<Metadata<Secret>>, setting, namespaces),
            Self::Dynamic(kind) => {
                let kind = kind.clone();
                halves(move || ByObject::dynamic(&kind), setting, namespaces)
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

/// The server, the Sprockets' kind and three namespaces of the test's own, holding
/// [`OBJECTS`] as Secrets and as Sprockets.
struct Seeded {
    server: TestCluster,
    sprockets: DynamicKind,
    namespaces: [String; 3],
}

impl Seeded {
    /// Of a cache's entries, those in the seeded namespaces (a real cluster has others).
    fn own(&self, cached: BTreeMap<String, Option<String>>) -> BTreeMap<String, Option<String>> {
        cached
            .into_iter()
            .filter(|(key, _)| {
                let namespace = key.split('/').next().unwrap_or_default();
                self.namespaces.iter().any(|own| own == namespace)
            })
            .collect()
    }
}

/// A server holding three fresh namespaces, and [`OBJECTS`] in each as Secrets and as
/// Sprockets.
async fn seeded() -> Seeded {
    let server = TestCluster::start().await.unwrap();
    let client = server.client().unwrap();
    let sprockets = install(&server, &Sprocket::crd()).await;
    let first = SEEDED.fetch_add(3, Ordering::SeqCst);
    let namespaces = [0, 1, 2].map(|i| format!("{}-s{}", ns(), first + i));
    for namespace in &namespaces {
        let mut object = Namespace::default();
        object.metadata.name = Some(namespace.to_owned());
        server.create(&object).await.unwrap();
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
            server.create(&secret).await.unwrap();
            let mut sprocket = DynamicObject::new(name, sprockets.resource()).within(namespace);
            sprocket.metadata = metadata;
            sprocket.data = json!({"spec": {"teeth": 12}});
            Api::<DynamicObject>::namespaced_with(client.clone(), namespace, sprockets.resource())
                .create(&PostParams::default(), &sprocket)
                .await
                .unwrap();
        }
    }
    Seeded {
        server,
        sprockets,
        namespaces,
    }
}

/// Runs a manager with `halves` applied in this order (its caches spanning every namespace
/// unless they say otherwise), and returns what the cache of `representation` held once
/// synced in the seeded namespaces.
async fn cache_after(
    seeded: &Seeded,
    representation: &Representation,
    halves: [&Half; 2],
) -> BTreeMap<String, Option<String>> {
    let all_namespaces = Manager::builder(seeded.server.client().unwrap()).handle_signals(false);
    let builder = halves[1](halves[0](all_namespaces));
    let manager = Arc::new(builder.build());
    representation.register(&manager.cache());
    let running = spawn(&manager);
    eventually("the cache synced", LIMIT, || manager.has_synced()).await;
    let cached = representation.cached(&manager.cache());
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    seeded.own(cached)
}

/// What each setting's two halves must leave in the cache of the seeded `namespaces`:
/// `namespace/name` and mark.
fn expected(setting: Setting, namespaces: &[String; 3]) -> BTreeMap<String, Option<String>> {
    let mut expected = BTreeMap::new();
    for (at, namespace) in namespaces.iter().enumerate() {
        for (name, labels) in OBJECTS {
            let both_labels = labels.len() == 2;
            let kept = match setting {
                Setting::Namespaces => at != 2,
                Setting::Labels => both_labels,
                Setting::Fields => !name.starts_with("skip-"),
                Setting::Transform => at == 0,
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
    let seeded = seeded().await;
    let representation = representation(seeded.sprockets.clone());
    let [first, second] = representation.halves(setting, &seeded.namespaces);
    let forward = cache_after(&seeded, &representation, [&first, &second]).await;
    let backward = cache_after(&seeded, &representation, [&second, &first]).await;
    assert_eq!(
        forward,
        expected(setting, &seeded.namespaces),
        "{setting:?}, first then second"
    );
    assert_eq!(
        backward, forward,
        "{setting:?}: the order changed the cache"
    );
    seeded.server.shutdown().await;
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
    let seeded = seeded().await;
    let second = seeded.namespaces[1].clone();
    let full: Half = Box::new(|builder: ManagerBuilder| {
        builder.by_object(ByObject::of::<Secret>().transform(marking("full")))
    });
    let meta: Half = Box::new(move |builder: ManagerBuilder| {
        builder.by_object(
            ByObject::of::<Metadata<Secret>>()
                .namespaces([second.clone()])
                .transform(marking("metadata")),
        )
    });
    for order in [[&full, &meta], [&meta, &full]] {
        let marks = |mark: &str| -> BTreeMap<String, Option<String>> {
            OBJECTS
                .iter()
                .map(|(name, _)| {
                    let key = format!("{}/{name}", seeded.namespaces[1]);
                    (key, Some(mark.to_owned()))
                })
                .collect()
        };
        let typed = cache_after(&seeded, &Representation::Typed, order).await;
        assert_eq!(typed, marks("full"));
        let metadata = cache_after(&seeded, &Representation::Metadata, order).await;
        assert_eq!(metadata, marks("metadata"));
    }
    seeded.server.shutdown().await;
}
