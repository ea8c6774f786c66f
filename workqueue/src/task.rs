//! Lazily started background tasks.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::runtime::Handle;

/// A background task that is spawned at most once, on the configured runtime or, when none
/// was configured, on the runtime of the first caller that runs inside one.
///
/// This keeps constructors callable outside a runtime without panicking: the task simply
/// starts at the first call made from within one.
#[derive(Debug)]
pub(crate) struct LazyTask {
    started: AtomicBool,
    handle: Option<Handle>,
}

impl LazyTask {
    /// A task slot that spawns on `handle`, or on the caller's runtime when `None`.
    pub(crate) fn new(handle: Option<Handle>) -> Self {
        Self {
            started: AtomicBool::new(false),
            handle,
        }
    }

    /// Spawns the future built by `make` unless it already runs. Returns whether it runs.
    #[inline]
    pub(crate) fn ensure<F, M>(&self, make: M) -> bool
    where
        M: FnOnce() -> F,
        F: Future<Output = ()> + Send + 'static,
    {
        if self.started.load(Ordering::Acquire) {
            return true;
        }
        self.start(make)
    }

    #[cold]
    fn start<F, M>(&self, make: M) -> bool
    where
        M: FnOnce() -> F,
        F: Future<Output = ()> + Send + 'static,
    {
        let handle = match &self.handle {
            Some(handle) => handle.clone(),
            None => match Handle::try_current() {
                Ok(handle) => handle,
                Err(_) => return false,
            },
        };
        if self.started.swap(true, Ordering::AcqRel) {
            return true;
        }
        drop(handle.spawn(make()));
        true
    }
}
