//! [`DeltaFifoOptions`]: how a [`DeltaFifo`](crate::DeltaFifo) is built.

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use indexer::KnownObjects;

/// A transform applied to every object a producer adds, updates, deletes or relists, before it
/// is queued (for example, to drop `managedFields`). It must keep the object's name and namespace.
///
/// Never applied to resync objects (they come from the consumer's cache and were transformed
/// already) nor to tombstones. An error rejects that one write: the producer gets it back.
pub type TransformFn<K> =
    Arc<dyn Fn(Arc<K>) -> Result<Arc<K>, Box<dyn StdError + Send + Sync>> + Send + Sync>;

/// Options of a [`DeltaFifo`](crate::DeltaFifo).
///
/// ```
/// # use std::sync::Arc;
/// use deltafifo::{DeltaFifo, DeltaFifoOptions};
/// use indexer::{Indexer, Indexers};
/// use k8s_openapi::api::core::v1::Pod;
///
/// let cache: Indexer<Pod> = Indexer::new(Indexers::new().with_namespace());
/// let fifo = DeltaFifo::new(
///     DeltaFifoOptions::new()
///         .known_objects(Arc::new(cache.clone()))
///         .transform(|pod: Arc<Pod>| {
///             let mut pod = Arc::unwrap_or_clone(pod);
///             pod.metadata.managed_fields = None;
///             Ok(Arc::new(pod))
///         }),
/// );
/// # assert!(!fifo.has_synced());
/// ```
pub struct DeltaFifoOptions<K> {
    pub(crate) known_objects: Option<Arc<dyn KnownObjects<K>>>,
    pub(crate) emit_replaced: bool,
    pub(crate) transform: Option<TransformFn<K>>,
}

impl<K> DeltaFifoOptions<K> {
    /// No known objects, relists emit `Replaced`, no transform.
    pub fn new() -> Self {
        Self {
            known_objects: None,
            emit_replaced: true,
            transform: None,
        }
    }

    /// The consumer's view of what exists (in an informer, its indexer): used by `replace` to
    /// emit tombstones for objects missing from a relist, by `delete` to ignore unknown objects,
    /// and by `resync`.
    pub fn known_objects(mut self, known: Arc<dyn KnownObjects<K>>) -> Self {
        self.known_objects = Some(known);
        self
    }

    /// Whether `replace` queues `Replaced` deltas (the default, as informers use) or `Sync`
    /// deltas (client-go's behaviour before `Replaced` existed).
    pub fn emit_replaced(mut self, emit_replaced: bool) -> Self {
        self.emit_replaced = emit_replaced;
        self
    }

    /// Applies `transform` to objects before they are queued; see [`TransformFn`].
    pub fn transform(
        mut self,
        transform: impl Fn(Arc<K>) -> Result<Arc<K>, Box<dyn StdError + Send + Sync>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.transform = Some(Arc::new(transform));
        self
    }
}

impl<K> Default for DeltaFifoOptions<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> fmt::Debug for DeltaFifoOptions<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeltaFifoOptions")
            .field("known_objects", &self.known_objects.is_some())
            .field("emit_replaced", &self.emit_replaced)
            .field("transform", &self.transform.is_some())
            .finish()
    }
}
