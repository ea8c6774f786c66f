//! [`Queue`]: what a consumer (an informer) needs of a fifo, so that it drives a
//! [`DeltaFifo`] or an [`InOrderFifo`] alike (client-go's `Queue` and `QueueWithBatch`).

use std::future::Future;

use indexer::Store;
use kube::Resource;

use crate::batch::Batch;
use crate::delta_fifo::DeltaFifo;
use crate::error::Error;
use crate::in_order_fifo::InOrderFifo;

/// A fifo between a producer that writes through [`Store`] (a reflector) and one consumer that
/// pops [`Batch`]es: implemented by [`DeltaFifo`] and [`InOrderFifo`].
///
/// ```
/// use deltafifo::{DeltaFifo, InOrderFifo, Item, Queue};
/// use indexer::Store;
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// /// Counts the changes a fifo hands out until it is closed and drained.
/// async fn count_changes(fifo: &impl Queue<ConfigMap>) -> usize {
///     let mut changes = 0;
///     while let Ok(popped) = fifo
///         .pop_batch(100, |batch| {
///             batch
///                 .items()
///                 .iter()
///                 .map(|item| match item {
///                     Item::Deltas(deltas) => deltas.len(),
///                     Item::Replaced(list) => list.len(),
///                     Item::Resync => 0,
///                 })
///                 .sum::<usize>()
///         })
///         .await
///     {
///         changes += popped;
///     }
///     changes
/// }
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # use std::sync::Arc;
/// # fn cm(name: &str) -> Arc<ConfigMap> {
/// #     let mut cm = ConfigMap::default();
/// #     cm.metadata.namespace = Some("default".into());
/// #     cm.metadata.name = Some(name.into());
/// #     Arc::new(cm)
/// # }
/// let deltas: DeltaFifo<ConfigMap> = DeltaFifo::default();
/// let in_order: InOrderFifo<ConfigMap> = InOrderFifo::default();
/// for fifo in [&deltas as &dyn Store<ConfigMap>, &in_order] {
///     fifo.add(cm("a"))?;
///     fifo.update(cm("a"))?;
/// }
/// deltas.close();
/// in_order.close();
/// // Both hand out both changes: the delta fifo as one key's deltas, the in-order fifo as two items.
/// assert_eq!(count_changes(&deltas).await, 2);
/// assert_eq!(count_changes(&in_order).await, 2);
/// # Ok(())
/// # }
/// ```
pub trait Queue<K>: Store<K> + Clone + Send + Sync + 'static {
    /// Waits for work, takes a batch of at most `max_items` items (at least one) and runs
    /// `process` on it; returns what `process` returns, or [`Error::Closed`] once the fifo is
    /// closed and drained. The fifo has synced once the initial list's batches have been
    /// processed.
    fn pop_batch<R>(
        &self,
        max_items: usize,
        process: impl FnOnce(Batch<K>) -> R + Send,
    ) -> impl Future<Output = Result<R, Error>> + Send;

    /// Whether the initial list has been popped and processed (or a write came before any).
    fn has_synced(&self) -> bool;

    /// Waits until [`has_synced`](Self::has_synced) is true.
    fn synced(&self) -> impl Future<Output = ()> + Send;

    /// Closes the fifo: pops drain what is queued, then return [`Error::Closed`].
    fn close(&self);

    /// How many keys ([`DeltaFifo`]) or items ([`InOrderFifo`]) are queued.
    fn len(&self) -> usize;

    /// Whether nothing is queued.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Records a bookmark: the server's state up to `resource_version` has been written.
    fn bookmark(&self, resource_version: String);

    /// The resource version of the newest state the consumer is known to have processed ("" before
    /// any); see each fifo's `synced_resource_version`.
    fn synced_resource_version(&self) -> String;
}

impl<K: Resource + Send + Sync + 'static> Queue<K> for DeltaFifo<K> {
    fn pop_batch<R>(
        &self,
        max_items: usize,
        process: impl FnOnce(Batch<K>) -> R + Send,
    ) -> impl Future<Output = Result<R, Error>> + Send {
        DeltaFifo::pop_batch(self, max_items, process)
    }

    fn has_synced(&self) -> bool {
        DeltaFifo::has_synced(self)
    }

    fn synced(&self) -> impl Future<Output = ()> + Send {
        DeltaFifo::synced(self)
    }

    fn close(&self) {
        DeltaFifo::close(self);
    }

    fn len(&self) -> usize {
        DeltaFifo::len(self)
    }

    fn bookmark(&self, resource_version: String) {
        DeltaFifo::bookmark(self, resource_version);
    }

    fn synced_resource_version(&self) -> String {
        DeltaFifo::synced_resource_version(self)
    }
}

impl<K: Resource + Send + Sync + 'static> Queue<K> for InOrderFifo<K> {
    fn pop_batch<R>(
        &self,
        max_items: usize,
        process: impl FnOnce(Batch<K>) -> R + Send,
    ) -> impl Future<Output = Result<R, Error>> + Send {
        InOrderFifo::pop_batch(self, max_items, process)
    }

    fn has_synced(&self) -> bool {
        InOrderFifo::has_synced(self)
    }

    fn synced(&self) -> impl Future<Output = ()> + Send {
        InOrderFifo::synced(self)
    }

    fn close(&self) {
        InOrderFifo::close(self);
    }

    fn len(&self) -> usize {
        InOrderFifo::len(self)
    }

    fn bookmark(&self, resource_version: String) {
        InOrderFifo::bookmark(self, resource_version);
    }

    fn synced_resource_version(&self) -> String {
        InOrderFifo::synced_resource_version(self)
    }
}
