//! [`FifoKind`]: which of the two fifos an informer's reflector writes into, and how the
//! informer builds it.

use std::sync::Arc;

use deltafifo::{DeltaFifo, DeltaFifoOptions, InOrderFifo, InOrderFifoOptions};
use indexer::Indexer;

use crate::transform::TransformFn;

/// The most items the informer takes from its fifo at once (client-go's batch size): applied to
/// the cache under one write lock and handed to each handler in one wake-up.
pub(crate) const POP_BATCH: usize = 1000;

/// The most queued keys a delta fifo lets its reflector add to before the reflector waits for
/// the pop loop: a watch decoded faster than the cache takes it waits in the connection
/// instead of in memory. About a millisecond or two of processing for small objects; each key
/// holds at least one decoded object.
const DELTA_FIFO_BACKLOG_LIMIT: usize = 1024;

/// The same for an in-order fifo, in items: two batches (client-go lets its producers write
/// during processing while less than two batches are queued).
const IN_ORDER_FIFO_BACKLOG_LIMIT: usize = 2 * POP_BATCH;

/// Which fifo sits between an informer's reflector and its cache.
///
/// | | [`Deltas`](Self::Deltas) (the default) | [`InOrder`](Self::InOrder) |
/// |---|---|---|
/// | handlers see | each object's changes together, objects in order of their first change | every change in the order the server sent it |
/// | a relist | queued as one change per object, its tombstones worked out by the fifo | queued whole; the informer works out the tombstones against its cache |
/// | the reflector waits for the informer's processing | for deletes, relists and resyncs | never (only for the bound on the backlog) |
/// | client-go | `DeltaFIFO` | `RealFIFO` (1.36: in order, atomic, batched, unlocked while processing) |
///
/// Both deliver the same cache transitions with the same `has_synced`, tombstone and resync
/// meaning, in batches of up to 1 000 items applied to the cache under one lock. The default
/// is the delta fifo, unlike client-go 1.36: it applies a paginated relist page by page, where
/// the in-order fifo's atomic relist holds the whole new list beside the old cache (a relist of
/// 100k pods peaked at 1.04× the steady memory against 1.66×), and through the informer the two
/// run level within the benchmarks' spread; a slow handler holds up neither, each handler having
/// a buffer of its own (the repository's `docs/fifos.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FifoKind {
    /// client-go's `DeltaFIFO`: changes accumulated per key
    /// ([`deltafifo::DeltaFifo`]).
    #[default]
    Deltas,
    /// client-go's `RealFIFO`: every change in arrival order ([`deltafifo::InOrderFifo`]).
    InOrder,
}

/// A delta fifo for an informer whose cache is `cache`.
pub(crate) fn delta_fifo<K: Send + Sync + 'static>(
    cache: &Indexer<K>,
    transform: Option<TransformFn<K>>,
) -> DeltaFifo<K> {
    let mut options = DeltaFifoOptions::new()
        .known_objects(Arc::new(cache.clone()))
        .emit_replaced(true)
        .backlog_limit(DELTA_FIFO_BACKLOG_LIMIT);
    if let Some(transform) = transform {
        options = options.transform(move |obj| transform(obj));
    }
    DeltaFifo::new(options)
}

/// An in-order fifo for an informer.
pub(crate) fn in_order_fifo<K: 'static>(transform: Option<TransformFn<K>>) -> InOrderFifo<K> {
    let mut options = InOrderFifoOptions::new().backlog_limit(IN_ORDER_FIFO_BACKLOG_LIMIT);
    if let Some(transform) = transform {
        options = options.transform(move |obj| transform(obj));
    }
    InOrderFifo::new(options)
}
