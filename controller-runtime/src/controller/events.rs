//! Event shorthands on [`Context`]: an event about the object being reconciled in one call, as
//! Go's `Recorder.Event(obj, type, reason, message)`.

use k8s_openapi::api::core::v1::ObjectReference;

use crate::controller::context::Context;
use crate::events::{EventRecord, EventType, reference_to};
use crate::kind::Kind;

impl<K: Kind> Context<K> {
    /// Publishes a `Normal` event about the object being reconciled through the controller's
    /// recorder (`events.k8s.io/v1`; repeats fold into a series). The event's `action` is its
    /// `reason`. Never waits; see [`Recorder`](crate::events::Recorder).
    ///
    /// ```no_run
    /// # use controller_runtime::controller::Context;
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # fn demo(ctx: &Context<ConfigMap>) {
    /// ctx.normal_event("Synced", "ConfigMap synced successfully");
    /// ctx.warning_event("InvalidSpec", "data.size is not a number");
    /// # }
    /// ```
    pub fn normal_event(&self, reason: &str, note: impl Into<String>) {
        self.event(EventRecord::new(EventType::Normal, reason, note));
    }

    /// Publishes a `Warning` event about the object being reconciled; see
    /// [`normal_event`](Self::normal_event).
    pub fn warning_event(&self, reason: &str, note: impl Into<String>) {
        self.event(EventRecord::new(EventType::Warning, reason, note));
    }

    /// Publishes `record` about the object being reconciled: the cached object, or its last known
    /// state once deleted, or — never seen — a reference built from the request's key.
    pub fn event(&self, record: EventRecord) {
        let regarding = match self.get().or_else(|| self.deleted()) {
            Some(obj) => reference_to(obj.as_ref()),
            None => ObjectReference {
                api_version: Some(K::api_version(&()).into_owned()),
                kind: Some(K::kind(&()).into_owned()),
                name: Some(self.key().name().to_owned()),
                namespace: self.key().namespace().map(str::to_owned),
                ..ObjectReference::default()
            },
        };
        self.recorder().publish(regarding, record);
    }
}
