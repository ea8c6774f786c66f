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
