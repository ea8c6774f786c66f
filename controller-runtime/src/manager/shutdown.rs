//! [`ShutdownHandle`]: asks a running manager to stop — gracefully the first time, at once the
//! second time (as a second Ctrl-C does).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio_util::sync::CancellationToken;

/// A cheap, cloneable handle that stops the [`Manager`](crate::manager::Manager) it came from.
#[derive(Clone, Debug, Default)]
pub struct ShutdownHandle {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    requests: AtomicUsize,
    graceful: CancellationToken,
    forced: CancellationToken,
}

impl ShutdownHandle {
    /// Requests a shutdown. The first request stops intake and drains in-flight reconciles
    /// (bounded by the graceful shutdown timeout); any later request makes `start` return at
    /// once, cancelling what is still running.
    pub fn shutdown(&self) {
        let previous = self.inner.requests.fetch_add(1, Ordering::SeqCst);
        if previous == 0 {
            tracing::info!("shutdown requested; draining in-flight reconciles");
            self.inner.graceful.cancel();
        } else {
            tracing::warn!("second shutdown request; exiting at once");
            self.inner.forced.cancel();
        }
    }

    /// Whether a shutdown has been requested.
    pub fn is_shutting_down(&self) -> bool {
        self.inner.graceful.is_cancelled()
    }

    /// Cancelled at the first request.
    pub(crate) fn graceful(&self) -> &CancellationToken {
        &self.inner.graceful
    }

    /// Cancelled at the second request.
    pub(crate) fn forced(&self) -> &CancellationToken {
        &self.inner.forced
    }
}

/// Turns SIGINT and SIGTERM into shutdown requests until the returned task is aborted.
pub(crate) fn listen_for_signals(
    handle: ShutdownHandle,
) -> Result<tokio::task::JoinHandle<()>, std::io::Error> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut terminate = signal(SignalKind::terminate())?;
        Ok(tokio::spawn(async move {
            loop {
                tokio::select! {
                    Some(()) = interrupt.recv() => tracing::info!("received SIGINT"),
                    Some(()) = terminate.recv() => tracing::info!("received SIGTERM"),
                    else => return,
                }
                handle.shutdown();
            }
        }))
    }
    #[cfg(not(unix))]
    {
        Ok(tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                handle.shutdown();
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_request_is_graceful_second_is_forced() {
        let handle = ShutdownHandle::default();
        assert!(!handle.is_shutting_down());
        handle.clone().shutdown();
        assert!(handle.graceful().is_cancelled() && !handle.forced().is_cancelled());
        handle.shutdown();
        assert!(handle.forced().is_cancelled());
    }
}
