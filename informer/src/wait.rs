//! Waiting for caches to sync: [`CacheSynced`] and [`wait_for_cache_sync`].

use futures::future::{BoxFuture, join_all};

/// Something that syncs once: an informer (its cache holds the initial list) or a handler
/// [`Registration`](crate::Registration) (it has also processed it).
pub trait CacheSynced: Send + Sync {
    /// Whether it has synced.
    fn has_synced(&self) -> bool;

    /// Completes when it has synced; owns what it needs, so it can outlive `self`.
    fn wait_synced(&self) -> BoxFuture<'static, ()>;
}

/// Waits until every one of `signals` has synced, without polling: each is awaited on its own
/// signal (client-go's `WaitFor`).
///
/// Never completes if one never syncs (for example, its informer was not started); bound the
/// wait with `tokio::time::timeout` or race it with a shutdown signal:
///
/// ```no_run
/// # async fn demo(pods: &dyn informer::CacheSynced, reg: &informer::Registration) {
/// use std::time::Duration;
///
/// let synced = tokio::time::timeout(
///     Duration::from_secs(30),
///     informer::wait_for_cache_sync(&[pods, reg]),
/// )
/// .await
/// .is_ok();
/// # let _ = synced;
/// # }
/// ```
pub async fn wait_for_cache_sync(signals: &[&dyn CacheSynced]) {
    let pending: Vec<_> = signals
        .iter()
        .filter(|signal| !signal.has_synced())
        .map(|signal| signal.wait_synced())
        .collect();
    join_all(pending).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::watch;

    struct Flag(watch::Sender<bool>);

    impl CacheSynced for Flag {
        fn has_synced(&self) -> bool {
            *self.0.borrow()
        }

        fn wait_synced(&self) -> BoxFuture<'static, ()> {
            let mut synced = self.0.subscribe();
            Box::pin(async move {
                let _ = synced.wait_for(|synced| *synced).await;
            })
        }
    }

    #[tokio::test]
    async fn completes_once_every_signal_fired() {
        let flags: Vec<Flag> = (0..50).map(|_| Flag(watch::Sender::new(false))).collect();
        let signals: Vec<&dyn CacheSynced> = flags.iter().map(|f| f as &dyn CacheSynced).collect();
        let mut wait = std::pin::pin!(wait_for_cache_sync(&signals));
        for flag in &flags[..49] {
            flag.0.send_replace(true);
        }
        assert!(futures::poll!(wait.as_mut()).is_pending());
        flags[49].0.send_replace(true);
        assert!(futures::poll!(wait.as_mut()).is_ready());
        // With nothing to wait for it is ready at once.
        wait_for_cache_sync(&[]).await;
    }
}
