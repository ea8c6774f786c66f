//! [`ControllerState`]: what one controller's event handlers and workers share — the primary
//! informer, the record of its own writes (staleness), deleted objects' last known state — and
//! what each reconcile's [`Context`](crate::controller::Context) reads through.

use std::collections::HashMap;
use std::sync::Arc;

use indexer::ObjectKey;
use informer::Object;
use kube::Client;
use parking_lot::Mutex;

use crate::cache::{Cache, KindCache, KindKey};
use crate::controller::staleness::Staleness;
use crate::events::Recorder;

/// State one controller shares between its event handlers and its workers.
pub(crate) struct ControllerState<K: Object> {
    pub(crate) name: Arc<str>,
    pub(crate) client: Client,
    pub(crate) cache: Cache,
    /// The primary kind's cache (one informer per cached namespace, or one).
    pub(crate) primary: Arc<KindCache<K>>,
    /// The primary kind's resource (`()` for a typed kind, its `ApiResource` for a dynamic one).
    pub(crate) dyntype: K::DynamicType,
    /// The primary kind's cache key (writes to the primary object are recorded against it).
    pub(crate) primary_kind: KindKey,
    /// The controller's own writes, which reconciles wait for the caches to catch up with.
    pub(crate) staleness: Arc<Staleness>,
    /// Last known state of deleted primary objects, until their reconcile succeeds.
    pub(crate) deleted: Mutex<HashMap<ObjectKey, Arc<K>>>,
    pub(crate) recorder: Recorder,
}
