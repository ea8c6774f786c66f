//! A minimal core/v1 event recorder: what client-go's `record` broadcaster does for the
//! sample-controller. Identical events (same object, type, reason and message) are folded into
//! one Event whose `count` and `lastTimestamp` grow, as client-go's correlator does.
//!
//! Go's sample-controller writes core/v1 Events through client-go's `record` package, and so
//! does this port, to stay Go-identical; operators of their own use controller-runtime's
//! [`Recorder`](controller_runtime::events::Recorder), which writes events.k8s.io/v1 Events.

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{Event, EventSource, ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client, Resource, ResourceExt};
use parking_lot::Mutex;

/// At most this many distinct events are remembered for folding (client-go's LRU size).
const MAX_REMEMBERED: usize = 4096;

/// Whether an event reports normal operation or a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// Normal operation.
    Normal,
    /// Something went wrong.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            Self::Normal => "Normal",
            Self::Warning => "Warning",
        }
    }
}

/// Identity of an event for folding repeats.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct EventKey {
    uid: String,
    namespace: String,
    name: String,
    event_type: EventType,
    reason: String,
    message: String,
}

/// The Event already stored for an [`EventKey`] and how often it happened.
#[derive(Clone, Debug)]
struct Seen {
    event_name: String,
    count: i32,
}

/// Posts core/v1 Events about objects, as component `component`. Cheap to clone. Failures are
/// logged, never returned: events are best effort, as in client-go.
#[derive(Clone)]
pub struct Recorder {
    client: Client,
    component: Arc<str>,
    seen: Arc<Mutex<HashMap<EventKey, Seen>>>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("component", &self.component)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder that reports as `component` (the Event's `source.component`).
    pub fn new(client: Client, component: &str) -> Self {
        Self {
            client,
            component: component.into(),
            seen: Arc::default(),
        }
    }

    /// Records an event about `obj`.
    pub async fn record<K>(&self, obj: &K, event_type: EventType, reason: &str, message: &str)
    where
        K: Resource<DynamicType = ()>,
    {
        let namespace = obj.namespace().unwrap_or_else(|| "default".to_owned());
        let key = EventKey {
            uid: obj.uid().unwrap_or_default(),
            namespace: namespace.clone(),
            name: obj.name_any(),
            event_type,
            reason: reason.to_owned(),
            message: message.to_owned(),
        };
        tracing::info!(
            object = %format_args!("{}/{}", key.namespace, key.name),
            kind = %K::kind(&()),
            r#type = event_type.as_str(),
            reason,
            message,
            "Event occurred"
        );
        let api: Api<Event> = Api::namespaced(self.client.clone(), &namespace);
        let now = Timestamp::now();
        let previous = self.seen.lock().get(&key).cloned();
        if let Some(seen) = previous {
            let count = seen.count.saturating_add(1);
            let patch = serde_json::json!({
                "count": count,
                "lastTimestamp": Time(now),
            });
            let params = PatchParams::default();
            match api
                .patch(&seen.event_name, &params, &Patch::Merge(&patch))
                .await
            {
                Ok(_) => {
                    self.remember(key, seen.event_name, count);
                    return;
                }
                // Gone (expired or deleted): post a fresh one below.
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => {
                    tracing::warn!(%error, reason, "could not update event");
                    return;
                }
            }
        }
        let event = self.new_event(obj, &key, now);
        let event_name = event.metadata.name.clone().unwrap_or_default();
        match api.create(&PostParams::default(), &event).await {
            Ok(_) => self.remember(key, event_name, 1),
            Err(error) => tracing::warn!(%error, reason, "could not record event"),
        }
    }

    fn remember(&self, key: EventKey, event_name: String, count: i32) {
        let mut seen = self.seen.lock();
        if seen.len() >= MAX_REMEMBERED && !seen.contains_key(&key) {
            seen.clear();
        }
        seen.insert(key, Seen { event_name, count });
    }

    fn new_event<K>(&self, obj: &K, key: &EventKey, now: Timestamp) -> Event
    where
        K: Resource<DynamicType = ()>,
    {
        let mut event = Event {
            involved_object: ObjectReference {
                api_version: Some(K::api_version(&()).into_owned()),
                kind: Some(K::kind(&()).into_owned()),
                name: Some(key.name.clone()),
                namespace: obj.namespace(),
                uid: obj.uid(),
                resource_version: obj.resource_version(),
                field_path: None,
            },
            reason: Some(key.reason.clone()),
            message: Some(key.message.clone()),
            type_: Some(key.event_type.as_str().to_owned()),
            source: Some(EventSource {
                component: Some(self.component.to_string()),
                host: None,
            }),
            reporting_component: Some(self.component.to_string()),
            first_timestamp: Some(Time(now)),
            last_timestamp: Some(Time(now)),
            count: Some(1),
            ..Event::default()
        };
        // `<object>.<unix nanos in hex>`, client-go's naming.
        let nanos = now.as_nanosecond();
        event.metadata.name = Some(format!("{}.{nanos:x}", key.name));
        event.metadata.namespace = Some(key.namespace.clone());
        event
    }
}
