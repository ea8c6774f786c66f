//! Every representation in every role: a typed kind (`Watch::of::<Secret>()`), its metadata
//! (`Watch::of::<Metadata<Secret>>()`) and a dynamic kind (`Watch::dynamic`, a CRD found by
//! discovery), each as the primary kind (`for_`), an owned kind (`owns`) and a mapped one
//! (`watches`), each with a predicate that reads what only its representation holds: the
//! Secret's data, the metadata's annotations, the dynamic object's spec.
//!
//! Every object carries a mode, `quiet` or `loud`; each watch's predicate drops the events of
//! quiet objects (by their new state for an update, their last one for a deletion). The tests
//! change two objects, `x` and `y`, whose events request two different keys: for each of a
//! create, an update and a delete, first an event the predicate drops, then one it passes. A
//! watch's handler sees its events in order and the single worker takes keys in order, so once
//! the passing event's key was reconciled, a reconcile of the dropped one would have been seen.
//! On the simulator the tests also wait five virtual seconds before each check, for a late
//! reconcile of any other origin. Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG`
//! set, against that cluster (where a whole cluster's own ConfigMaps in the namespace are not
//! counted).

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{DynamicKind, Metadata};
use controller_runtime::controller::predicate::from_fn;
use controller_runtime::controller::{
    Action, Context, Controller, Reconciler, Request, Watch, reconciler_fn,
};
use controller_runtime::informer::Object;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use kube::{Api, CustomResource, CustomResourceExt, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(30);
const QUIET: &str = "quiet";
const LOUD: &str = "loud";

/// Only here to generate the CRD; the controllers see Gadgets as `DynamicObject`s.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "matrix.kube-rt.dev",
    version = "v1",
    kind = "Gadget",
    namespaced
)]
pub struct GadgetSpec {
    mode: String,
}

/// The Secret's data says its mode: only the typed representation sees it.
fn typed() -> Watch<Secret> {
    Watch::of::<Secret>().predicate(from_fn(|secret: &Secret| {
        let mode = secret.data.as_ref().and_then(|data| data.get("mode"));
        mode.is_none_or(|mode| mode.0 != QUIET.as_bytes())
    }))
}

/// The Secret's `mode` annotation, as its metadata shows it.
fn metadata() -> Watch<PartialObjectMeta<Secret>> {
    Watch::of::<Metadata<Secret>>().predicate(from_fn(|secret: &PartialObjectMeta<Secret>| {
        let annotations = secret.metadata.annotations.as_ref();
        annotations.and_then(|a| a.get("mode")).map(String::as_str) != Some(QUIET)
    }))
}

/// The Gadget's `spec.mode`, read from the dynamic object's JSON.
fn dynamic(kind: DynamicKind) -> Watch<DynamicObject> {
    Watch::dynamic(kind).predicate(from_fn(|gadget: &DynamicObject| {
        gadget.data["spec"]["mode"] != QUIET
    }))
}

/// The kind whose objects a test changes, in the representation under test.
enum Subject {
    /// Secrets, their mode in their data.
    Typed,
    /// Secrets, their mode in an annotation.
    Metadata,
    /// Gadgets, their mode in their spec.
    Dynamic(DynamicKind),
}

/// How a subject object relates to the key its events request.
enum Link {
    /// Through its own key (the primary kind).
    Itself,
    /// Through a controller owner reference to the ConfigMap of this name and uid.
    OwnedBy(String, String),
    /// Through a `notify` label naming a ConfigMap, for a `watches` mapper.
    Notifies(&'static str),
}

impl Subject {
    fn resource(&self) -> ApiResource {
        match self {
            Self::Typed | Self::Metadata => ApiResource::erase::<Secret>(&()),
            Self::Dynamic(kind) => kind.resource().clone(),
        }
    }

    fn api(&self, server: &TestCluster) -> Api<DynamicObject> {
        Api::namespaced_with(server.client().unwrap(), ns(), &self.resource())
    }

    /// The fields that say an object's mode, as a merge patch.
    fn mode(&self, mode: &str) -> Value {
        match self {
            Self::Typed => {
                let encoded = serde_json::to_value(ByteString(mode.as_bytes().to_vec())).unwrap();
                json!({"data": {"mode": encoded}})
            }
            Self::Metadata => json!({"metadata": {"annotations": {"mode": mode}}}),
            Self::Dynamic(_) => json!({"spec": {"mode": mode}}),
        }
    }

    async fn create(&self, server: &TestCluster, name: &str, mode: &str, link: &Link) {
        let resource = self.resource();
        let mut object = json!({
            "apiVersion": resource.api_version,
            "kind": resource.kind,
            "metadata": {"name": name, "namespace": ns()},
        });
        match link {
            Link::Itself => {}
            Link::OwnedBy(owner, uid) => {
                let reference = owner_ref("v1", "ConfigMap", owner, uid, true);
                object["metadata"]["ownerReferences"] = json!([reference]);
            }
            Link::Notifies(target) => {
                object["metadata"]["labels"] = json!({"notify": target});
            }
        }
        merge(&mut object, self.mode(mode));
        let object: DynamicObject = serde_json::from_value(object).unwrap();
        self.api(server)
            .create(&PostParams::default(), &object)
            .await
            .unwrap();
    }

    async fn update(&self, server: &TestCluster, name: &str, mode: &str) {
        self.api(server)
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(self.mode(mode)),
            )
            .await
            .unwrap();
    }

    async fn delete(&self, server: &TestCluster, name: &str) {
        self.api(server)
            .delete(name, &DeleteParams::default())
            .await
            .unwrap();
    }
}

/// Merges the object `patch` into `into`.
fn merge(into: &mut Value, patch: Value) {
    match (into, patch) {
        (Value::Object(into), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(into.entry(key).or_insert(Value::Null), value);
            }
        }
        (into, patch) => *into = patch,
    }
}

/// A server with the Gadget CRD installed, and the Gadget kind as discovery describes it.
async fn with_gadgets() -> (TestCluster, DynamicKind) {
    let server = TestCluster::start().await.unwrap();
    let kind = install(&server, &Gadget::crd()).await;
    (server, kind)
}

/// The objects the tests make (a whole cluster puts ConfigMaps of its own in the namespace).
const OURS: [&str; 4] = ["a", "b", "x", "y"];

/// Counts the reconciles of each key of [`OURS`].
fn counting<T: Object>(counts: &Counts) -> impl Reconciler<T> {
    let seen = counts.clone();
    reconciler_fn(move |req: Request, _ctx: Context<T>| {
        if OURS.contains(&req.name()) {
            seen.hit(&req.to_string());
        }
        async { Ok::<_, Infallible>(Action::done()) }
    })
}

/// The ConfigMap a watched object's `notify` label names.
fn notified<T: Resource>(object: &T) -> Option<ObjectKey> {
    let target = object.meta().labels.as_ref()?.get("notify")?;
    ObjectKey::namespaced(ns(), target).ok()
}

/// The subject objects `x` and `y` and the keys their events request (`x_key`, `y_key`), with
/// how many reconciles each key had before.
struct Pair<'a> {
    x: (&'a str, Link),
    y: (&'a str, Link),
    x_key: String,
    y_key: String,
    before: usize,
}

/// Each event kind once dropped, then once passed; the dropped one must not reconcile its key.
async fn drive(server: &TestCluster, subject: &Subject, counts: &Counts, pair: Pair<'_>) {
    let Pair {
        x: (x, x_link),
        y: (y, y_link),
        x_key,
        y_key,
        before,
    } = pair;
    // Free on the simulator's paused clock; a real server relies on the order alone.
    let on_simulator = server.sim().is_some();
    let settle = || async move {
        if on_simulator {
            tokio::time::sleep(Duration::from_secs(5)).await;
        }
    };

    // Creates: quiet `x` dropped, loud `y` passed.
    subject.create(server, x, QUIET, &x_link).await;
    subject.create(server, y, LOUD, &y_link).await;
    eventually("the passed create", LIMIT, || {
        counts.get(&y_key) == before + 1
    })
    .await;
    settle().await;
    assert_eq!(counts.get(&x_key), before, "a dropped create reconciled");

    // Updates: `y` turned quiet is dropped, `x` turned loud passes.
    subject.update(server, y, QUIET).await;
    subject.update(server, x, LOUD).await;
    eventually("the passed update", LIMIT, || {
        counts.get(&x_key) == before + 1
    })
    .await;
    settle().await;
    assert_eq!(
        counts.get(&y_key),
        before + 1,
        "a dropped update reconciled"
    );

    // Deletes, judged by the last state: quiet `y` dropped, loud `x` passed.
    subject.delete(server, y).await;
    subject.delete(server, x).await;
    eventually("the passed delete", LIMIT, || {
        counts.get(&x_key) == before + 2
    })
    .await;
    settle().await;
    assert_eq!(
        counts.get(&y_key),
        before + 1,
        "a dropped delete reconciled"
    );
}

/// The watch is the controller's primary watch: events request the objects' own keys.
async fn as_primary<T: Object>(server: TestCluster, subject: Subject, watch: Watch<T>) {
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(watch)
        .build(counting::<T>(&counts))
        .unwrap();
    let running = spawn(&manager);

    let pair = Pair {
        x: ("x", Link::Itself),
        y: ("y", Link::Itself),
        x_key: format!("{}/x", ns()),
        y_key: format!("{}/y", ns()),
        before: 0,
    };
    drive(&server, &subject, &counts, pair).await;
    assert_eq!(counts.total(), 3, "x passed twice, y once");

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// A ConfigMap controller with `watch` as a secondary watch, owned (`owns`) or mapped by its
/// `notify` label (`watches`); `x` concerns ConfigMap `a`, `y` ConfigMap `b`.
async fn as_secondary<T: Object>(
    server: TestCluster,
    subject: Subject,
    watch: Watch<T>,
    owned: bool,
) {
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    let builder = Controller::new(&manager).for_(Watch::of::<ConfigMap>());
    let builder = if owned {
        builder.owns(watch)
    } else {
        builder.watches(watch, notified::<T>)
    };
    builder.build(counting::<ConfigMap>(&counts)).unwrap();
    let running = spawn(&manager);

    let a = server.create(&cm("a", "1")).await.unwrap();
    let b = server.create(&cm("b", "1")).await.unwrap();
    let (a_key, b_key) = (format!("{}/a", ns()), format!("{}/b", ns()));
    eventually("the ConfigMaps' own reconciles", LIMIT, || {
        counts.get(&a_key) == 1 && counts.get(&b_key) == 1
    })
    .await;
    let (x_link, y_link) = if owned {
        let owned_by = |owner: ConfigMap| {
            let uid = owner.metadata.uid.unwrap();
            Link::OwnedBy(owner.metadata.name.unwrap(), uid)
        };
        (owned_by(a), owned_by(b))
    } else {
        (Link::Notifies("a"), Link::Notifies("b"))
    };
    let pair = Pair {
        x: ("x", x_link),
        y: ("y", y_link),
        x_key: a_key,
        y_key: b_key,
        before: 1,
    };
    drive(&server, &subject, &counts, pair).await;
    assert_eq!(counts.total(), 5, "two ConfigMaps, x passed twice, y once");

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn typed_for_filters_with_its_predicate() {
    let server = TestCluster::start().await.unwrap();
    let (subject, watch) = (Subject::Typed, typed());
    as_primary(server, subject, watch).await;
}

#[tokio::test(start_paused = true)]
async fn typed_owns_filters_with_its_predicate() {
    let server = TestCluster::start().await.unwrap();
    let (subject, watch) = (Subject::Typed, typed());
    as_secondary(server, subject, watch, true).await;
}

#[tokio::test(start_paused = true)]
async fn typed_watches_filters_with_its_predicate() {
    let server = TestCluster::start().await.unwrap();
    let (subject, watch) = (Subject::Typed, typed());
    as_secondary(server, subject, watch, false).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_for_filters_with_its_predicate() {
    let server = TestCluster::start().await.unwrap();
    let (subject, watch) = (Subject::Metadata, metadata());
    as_primary(server, subject, watch).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_owns_filters_with_its_predicate() {
    let server = TestCluster::start().await.unwrap();
    let (subject, watch) = (Subject::Metadata, metadata());
    as_secondary(server, subject, watch, true).await;
}

#[tokio::test(start_paused = true)]
async fn metadata_watches_filters_with_its_predicate() {
    let server = TestCluster::start().await.unwrap();
    let (subject, watch) = (Subject::Metadata, metadata());
    as_secondary(server, subject, watch, false).await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_for_filters_with_its_predicate() {
    let (server, kind) = with_gadgets().await;
    let (subject, watch) = (Subject::Dynamic(kind.clone()), dynamic(kind));
    as_primary(server, subject, watch).await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_owns_filters_with_its_predicate() {
    let (server, kind) = with_gadgets().await;
    let (subject, watch) = (Subject::Dynamic(kind.clone()), dynamic(kind));
    as_secondary(server, subject, watch, true).await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_watches_filters_with_its_predicate() {
    let (server, kind) = with_gadgets().await;
    let (subject, watch) = (Subject::Dynamic(kind.clone()), dynamic(kind));
    as_secondary(server, subject, watch, false).await;
}
