//! [`ControllerState`]: what one controller's event handlers and workers share — the primary
//! informer, the write tracker of read-your-own-writes, deleted objects' last known state — and
//! what each reconcile's [`Context`](crate::controller::Context) reads through.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use indexer::ObjectKey;
use informer::Object;
use kube::Client;
use parking_lot::Mutex;

use crate::cache::{Cache, KindCache};
use crate::controller::ryow::WriteTracker;
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
    pub(crate) writes: WriteTracker,
    /// Last known state of deleted primary objects, until their reconcile succeeds.
    pub(crate) deleted: Mutex<HashMap<ObjectKey, Arc<K>>>,
    pub(crate) read_your_writes_timeout: Duration,
    pub(crate) recorder: Recorder,
}
