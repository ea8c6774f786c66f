//! Helpers shared by the integration tests.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Whether `future` is still pending after the runtime has run every other task (an hour of
/// paused time).
pub async fn still_pending<F: Future>(future: F) -> bool {
    tokio::time::timeout(Duration::from_secs(3600), future)
        .await
        .is_err()
}

/// Polls `future` once: its output if it is ready, `None` if it would wait (the future is then
/// dropped, which must lose nothing).
pub fn poll_once<F: Future>(future: F) -> Option<F::Output> {
    let mut future = pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}
