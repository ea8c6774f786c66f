//! [`DeltaFifoOptions`] and [`InOrderFifoOptions`]: how each fifo is built, and what the
//! options do to the objects a producer hands it (the transform, the delta a relisted object is
//! queued as).

use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use indexer::{KnownObjects, ObjectKeyRef};
use kube::Resource;

use crate::delta::Delta;

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
    pub(crate) backlog_limit: Option<usize>,
}

impl<K> DeltaFifoOptions<K> {
    /// No known objects, relists emit `Replaced`, no transform, no bound on the backlog.
    pub fn new() -> Self {
        Self {
            known_objects: None,
            emit_replaced: true,
            transform: None,
            backlog_limit: None,
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

    /// Bounds the backlog a producer builds: with more than `keys` keys queued (a write not yet
    /// merged into the queue counts as one),
    /// [`DeltaFifo::wait_for_room`](crate::DeltaFifo::wait_for_room) waits (and
    /// [`Store::backpressure`](indexer::Store::backpressure) asks a reflector to wait) until the
    /// consumer's pops bring the queue down to half of `keys`. Writes are never refused: a relist's
    /// keys all go in, and a producer that does not ask is not slowed. Without a bound (the
    /// default, and client-go's behaviour) the queue grows as far as a producer outruns the
    /// consumer. Only a fifo that has a consumer should be bounded: without one, a producer
    /// that asks waits until the fifo is closed.
    pub fn backlog_limit(mut self, keys: usize) -> Self {
        self.backlog_limit = Some(keys);
        self
    }
}

impl<K> DeltaFifoOptions<K> {
    /// The consumer's known objects, if any.
    pub(crate) fn known(&self) -> Option<&dyn KnownObjects<K>> {
        self.known_objects.as_deref()
    }

    /// The delta a relisted object is queued as.
    pub(crate) fn relisted(&self) -> fn(Arc<K>) -> Delta<K> {
        if self.emit_replaced {
            Delta::Replaced
        } else {
            Delta::Sync
        }
    }
}

/// Applies `transform`, if any, to `obj` (outside the fifo's locks); a failure names the
/// object's key.
///
/// The transform gets the caller's reference alone: a freshly decoded object is then its only
/// owner, so a transform can change it in place (`Arc::unwrap_or_clone` without a copy, a
/// compact object's JSON edited where it lies) instead of copying it. The key a failure names
/// is therefore taken before the call.
pub(crate) fn transformed<K: Resource>(
    transform: Option<&TransformFn<K>>,
    obj: Arc<K>,
) -> Result<Arc<K>, indexer::Error> {
    let Some(transform) = transform else {
        return Ok(obj);
    };
    let key = ObjectKeyRef::of(obj.as_ref()).and_then(|key| key.to_owned());
    transform(obj).map_err(|source| indexer::Error::Rejected {
        key: key.map_or_else(|_| "<unnamed>".to_owned(), |key| key.to_string()),
        source: format!("transform failed: {source}").into(),
    })
}

impl<K: Resource> DeltaFifoOptions<K> {
    /// Applies the transform (outside the fifo's locks); a failure names the object's key.
    pub(crate) fn transformed(&self, obj: Arc<K>) -> Result<Arc<K>, indexer::Error> {
        transformed(self.transform.as_ref(), obj)
    }

    /// Transforms the objects of a relist and checks their keys; fails on the first that
    /// cannot be keyed or transformed.
    pub(crate) fn prepare_listed(
        &self,
        objects: Vec<Arc<K>>,
    ) -> Result<Vec<Arc<K>>, indexer::Error> {
        objects
            .into_iter()
            .map(|obj| {
                let obj = self.transformed(obj)?;
                ObjectKeyRef::of(obj.as_ref())?.validate()?;
                Ok(obj)
            })
            .collect()
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
            .field("backlog_limit", &self.backlog_limit)
            .finish()
    }
}

/// Options of an [`InOrderFifo`](crate::InOrderFifo).
///
/// ```
/// # use std::sync::Arc;
/// use deltafifo::{InOrderFifo, InOrderFifoOptions};
/// use k8s_openapi::api::core::v1::Pod;
///
/// let fifo: InOrderFifo<Pod> = InOrderFifo::new(
///     InOrderFifoOptions::new()
///         .backlog_limit(1024)
///         .transform(|pod: Arc<Pod>| {
///             let mut pod = Arc::unwrap_or_clone(pod);
///             pod.metadata.managed_fields = None;
///             Ok(Arc::new(pod))
///         }),
/// );
/// # assert!(!fifo.has_synced());
/// ```
pub struct InOrderFifoOptions<K> {
    pub(crate) transform: Option<TransformFn<K>>,
    pub(crate) backlog_limit: Option<usize>,
}

impl<K> InOrderFifoOptions<K> {
    /// No transform, no bound on the backlog.
    pub fn new() -> Self {
        Self {
            transform: None,
            backlog_limit: None,
        }
    }

    /// Applies `transform` to every object a producer adds, updates, deletes or lists, before
    /// it is queued; see [`TransformFn`].
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

    /// Bounds the backlog a producer builds: with more than `items` items queued (a relist or a
    /// resync is one item),
    /// [`InOrderFifo::wait_for_room`](crate::InOrderFifo::wait_for_room) waits (and
    /// [`Store::backpressure`](indexer::Store::backpressure) asks a reflector to wait) until the
    /// consumer's pops bring the queue down to half of `items`. Writes are never refused.
    /// Without a bound (the default) the queue grows as far as a producer outruns the consumer.
    /// Only a fifo that has a consumer should be bounded.
    pub fn backlog_limit(mut self, items: usize) -> Self {
        self.backlog_limit = Some(items);
        self
    }
}

impl<K> Default for InOrderFifoOptions<K> {
    fn default() -> Self {
        Self::new()
    }
}

impl<K> fmt::Debug for InOrderFifoOptions<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InOrderFifoOptions")
            .field("transform", &self.transform.is_some())
            .field("backlog_limit", &self.backlog_limit)
            .finish()
    }
}
