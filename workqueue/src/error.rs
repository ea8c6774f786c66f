//! The crate's error type.

use thiserror::Error;

/// Errors from building a rate limiter or a priority with invalid parameters.
///
/// Queues themselves have no fallible operations: adds after shutdown are dropped by design,
/// and `get` reports shutdown with `None`.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum Error {
    /// The token bucket's refill rate is not a finite number above zero.
    #[error(
        "invalid token bucket rate {qps}: use a finite number of tokens per second above zero \
         (for example 10.0)"
    )]
    InvalidRate {
        /// The rejected rate, in tokens per second.
        qps: f64,
    },
    /// The token bucket's burst is zero, so it could never hand out a token.
    #[error("invalid token bucket burst 0: the burst must be at least 1 (client-go uses 100)")]
    ZeroBurst,
    /// A priority outside the range a [`Priority`](crate::Priority) allows.
    #[error(
        "priority {value} is out of range: use a value from -1000 to 1000 \
         (normal is 0, controller-runtime's low priority is -100)"
    )]
    PriorityOutOfRange {
        /// The rejected value.
        value: i32,
    },
}
