//! Containing a handler: a panic or an overrun of the handler timeout becomes a failure the
//! server answers with, instead of a dead connection or a stuck request.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures::FutureExt as _;

/// Why a contained handler did not answer.
#[derive(Debug)]
pub(crate) enum Failure {
    /// It panicked, with this message.
    Panicked(String),
    /// It did not finish within this time (and was cancelled).
    TimedOut(Duration),
}

impl Failure {
    /// The message a review carries for this failure.
    pub(crate) fn message(&self) -> String {
        match self {
            Self::Panicked(message) => format!("panic: {message} [recovered]"),
            Self::TimedOut(timeout) => {
                format!("the webhook handler did not answer within {timeout:?}")
            }
        }
    }
}

/// Runs `future` to completion within `timeout`, catching a panic of any of its polls.
pub(crate) async fn contain<T>(
    future: impl Future<Output = T>,
    timeout: Duration,
) -> Result<T, Failure> {
    match tokio::time::timeout(timeout, AssertUnwindSafe(future).catch_unwind()).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(payload)) => Err(Failure::Panicked(panic_message(payload.as_ref()))),
        Err(_) => Err(Failure::TimedOut(timeout)),
    }
}

/// Runs the blocking `work` on tokio's blocking pool within `timeout`, catching its panic. A
/// blocking task cannot be cancelled: one that overruns keeps its thread until it returns.
pub(crate) async fn contain_blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
    timeout: Duration,
) -> Result<T, Failure> {
    match tokio::time::timeout(timeout, tokio::task::spawn_blocking(work)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => match error.try_into_panic() {
            Ok(payload) => Err(Failure::Panicked(panic_message(payload.as_ref()))),
            Err(error) => Err(Failure::Panicked(error.to_string())),
        },
        Err(_) => Err(Failure::TimedOut(timeout)),
    }
}

/// The text of a panic payload.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_owned()
    } else if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}
