//! [`Recorder`]: publishes Kubernetes events (`events.k8s.io/v1`) about objects, from reconciles,
//! without ever blocking them.
//!
//! [`Recorder::publish`] only puts the event in a bounded queue; a [`RecorderTask`] (run by the
//! manager) writes them to the API server. When the queue is full the event is dropped and
//! counted ([`Recorder::dropped`]). Repeats of the same event — same object, type, reason,
//! action and note — within [`SERIES_WINDOW`] become one event whose `series.count` grows,
//! instead of one event each (client-go's `tools/events` series).

use std::collections::HashMap;
use std::error::Error as StdError;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event as KubeEvent, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::{ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::kind::Kind;
use crate::ops::runnable::Runnable;

/// How long repeats of an event are folded into its series (client-go: 6 minutes).
pub const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);
/// The default capacity of the recorder's queue.
pub const DEFAULT_EVENT_QUEUE: usize = 1000;
/// How many series the recorder remembers at most.
const MAX_SERIES: usize = 4096;

/// Whether an event reports normal operation or a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Normal operation.
    Normal,
    /// Something may need attention.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// One event to publish about an object.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EventRecord {
    /// Normal or Warning.
    pub type_: EventType,
    /// A short, machine-readable reason in UpperCamelCase (e.g. `SecretCreated`).
    pub reason: String,
    /// What the controller did or failed to do (e.g. `Create`).
    pub action: String,
    /// A human-readable description.
    pub note: Option<String>,
}

impl EventRecord {
    /// An event of `type_` with `reason` (also its `action`) and `note`.
    pub fn new(type_: EventType, reason: &str, note: impl Into<String>) -> Self {
        Self {
            type_,
            reason: reason.to_owned(),
            action: reason.to_owned(),
            note: Some(note.into()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct SeriesKey {
    regarding: (
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    ),
    record: EventRecord,
}

struct Queued {
    regarding: ObjectReference,
    record: EventRecord,
}

/// Publishes events; cheap to clone. Obtained from [`Context::recorder`](crate::controller::Context::recorder)
/// or [`Recorder::new`].
#[derive(Clone, Debug)]
pub struct Recorder {
    queue: mpsc::Sender<Queued>,
    dropped: Arc<AtomicU64>,
}

impl Recorder {
    /// A recorder reporting as `controller` (the events' `reportingController`) and its task,
    /// which must run for events to be written (the manager runs the task of every controller's
    /// recorder). `capacity` bounds the queue.
    pub fn new(client: Client, controller: &str, capacity: usize) -> (Recorder, RecorderTask) {
        let (queue, receiver) = mpsc::channel(capacity.max(1));
        let recorder = Recorder {
            queue,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        let task = RecorderTask {
            client,
            controller: controller.to_owned(),
            instance: format!("{controller}-{}", uuid::Uuid::new_v4().simple()),
            receiver,
            series: HashMap::new(),
        };
        (recorder, task)
    }

    /// Queues an event about `regarding` (see [`reference_to`]). Never waits: if the queue is
    /// full the event is dropped and counted.
    pub fn publish(&self, regarding: ObjectReference, record: EventRecord) {
        if self.queue.try_send(Queued { regarding, record }).is_err() {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(dropped, "event queue full or closed; dropping events");
            }
        }
    }

    /// Queues a `Normal` event about `obj` — client-go's `Recorder.Event(obj, "Normal", reason,
    /// note)`. The event's `action` is its `reason`; use [`publish`](Self::publish) to set both.
    pub fn normal<K: Kind>(&self, obj: &K, reason: &str, note: impl Into<String>) {
        self.publish(
            reference_to(obj),
            EventRecord::new(EventType::Normal, reason, note),
        );
    }

    /// Queues a `Warning` event about `obj`; see [`normal`](Self::normal).
    pub fn warning<K: Kind>(&self, obj: &K, reason: &str, note: impl Into<String>) {
        self.publish(
            reference_to(obj),
            EventRecord::new(EventType::Warning, reason, note),
        );
    }

    /// How many events were dropped because the queue was full (or the task had stopped).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// An object reference to `obj`, for [`Recorder::publish`].
pub fn reference_to<K: Kind>(obj: &K) -> ObjectReference {
    let meta = obj.meta();
    ObjectReference {
        api_version: Some(K::api_version(&()).into_owned()),
        kind: Some(K::kind(&()).into_owned()),
        name: meta.name.clone(),
        namespace: meta.namespace.clone(),
        uid: meta.uid.clone(),
        resource_version: meta.resource_version.clone(),
        field_path: None,
    }
}

struct Series {
    name: String,
    namespace: String,
    count: i32,
    last: Instant,
}

/// Writes a [`Recorder`]'s events to the API server; a [`Runnable`].
pub struct RecorderTask {
    client: Client,
    controller: String,
    instance: String,
    receiver: mpsc::Receiver<Queued>,
    series: HashMap<SeriesKey, Series>,
}

impl std::fmt::Debug for RecorderTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecorderTask")
            .field("controller", &self.controller)
            .field("series", &self.series.len())
            .finish_non_exhaustive()
    }
}

impl RecorderTask {
    /// Writes events until `shutdown`, then writes what is still queued and returns.
    pub async fn run_until(mut self, shutdown: CancellationToken) {
        loop {
            let queued = tokio::select! {
                queued = self.receiver.recv() => queued,
                () = shutdown.cancelled() => break,
            };
            let Some(queued) = queued else { return };
            self.write(queued).await;
        }
        self.receiver.close();
        while let Ok(queued) = self.receiver.try_recv() {
            self.write(queued).await;
        }
    }

    /// Writes one event: a new one, or a bump of its series.
    async fn write(&mut self, queued: Queued) {
        let now = Instant::now();
        self.series
            .retain(|_, series| now.duration_since(series.last) < SERIES_WINDOW);
        if self.series.len() >= MAX_SERIES
            && let Some(oldest) = self
                .series
                .iter()
                .min_by_key(|(_, series)| series.last)
                .map(|(key, _)| key.clone())
        {
            self.series.remove(&oldest);
        }
        let regarding = &queued.regarding;
        let key = SeriesKey {
            regarding: (
                regarding.uid.clone(),
                regarding.namespace.clone(),
                regarding.name.clone(),
                regarding.kind.clone(),
            ),
            record: queued.record.clone(),
        };
        let time = MicroTime(Timestamp::now());
        if let Some(series) = self.series.get_mut(&key) {
            series.count = series.count.saturating_add(1);
            series.last = now;
            let api: Api<KubeEvent> = Api::namespaced(self.client.clone(), &series.namespace);
            let patch = json!({"series": {"count": series.count, "lastObservedTime": time}});
            if let Err(error) = api
                .patch(&series.name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
            {
                tracing::warn!(%error, event = %series.name, "could not update event series");
            }
            return;
        }
        let namespace = regarding
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_owned());
        let name = format!(
            "{}.{:016x}",
            regarding.name.as_deref().unwrap_or("object"),
            fastrand::u64(..)
        );
        let record = &queued.record;
        let event = KubeEvent {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                namespace: Some(namespace.clone()),
                ..ObjectMeta::default()
            },
            event_time: Some(time),
            type_: Some(record.type_.as_str().to_owned()),
            reason: Some(record.reason.clone()),
            action: Some(record.action.clone()),
            note: record.note.clone(),
            regarding: Some(queued.regarding.clone()),
            reporting_controller: Some(self.controller.clone()),
            reporting_instance: Some(self.instance.clone()),
            series: None::<EventSeries>,
            ..KubeEvent::default()
        };
        let api: Api<KubeEvent> = Api::namespaced(self.client.clone(), &namespace);
        match api.create(&PostParams::default(), &event).await {
            Ok(_) => {
                self.series.insert(
                    key,
                    Series {
                        name,
                        namespace,
                        count: 1,
                        last: now,
                    },
                );
            }
            Err(error) => tracing::warn!(%error, reason = %record.reason, "could not create event"),
        }
    }
}

#[async_trait]
impl Runnable for RecorderTask {
    fn name(&self) -> &str {
        "event-recorder"
    }

    /// Publishes only what reconciles recorded, so it may run without leadership.
    fn need_leader_election(&self) -> bool {
        false
    }

    /// Creates `events.k8s.io` Events and patches them to bump their series.
    fn permissions(&self) -> Vec<crate::rbac::Rule> {
        vec![
            crate::rbac::Rule::of::<KubeEvent>()
                .verbs([crate::rbac::Verb::Create, crate::rbac::Verb::Patch]),
        ]
    }

    async fn run(
        self: Box<Self>,
        shutdown: CancellationToken,
    ) -> Result<(), Box<dyn StdError + Send + Sync>> {
        self.run_until(shutdown).await;
        Ok(())
    }
}
