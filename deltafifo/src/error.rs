//! The error type of this crate.

/// Errors of [`DeltaFifo::pop`](crate::DeltaFifo::pop).
///
/// Write errors (an object without a name, a failing transform) come from the
/// [`Store`](indexer::Store) methods as [`indexer::Error`]; the reflector logs them and goes on.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    /// The fifo was closed and everything queued has been popped; stop consuming.
    #[error("the delta fifo is closed and drained; stop popping")]
    Closed,
}
