//! Queue configuration: name, metrics provider and runtime.

use std::fmt;
use std::sync::Arc;

use tokio::runtime::Handle;

use crate::metrics::{MetricsProvider, QueueMetrics};

/// Options shared by [`Queue`](crate::Queue), [`DelayingQueue`](crate::DelayingQueue),
/// [`RateLimitingQueue`](crate::RateLimitingQueue) and [`PriorityQueue`](crate::PriorityQueue).
///
/// ```
/// use std::sync::Arc;
/// use workqueue::{NoopMetrics, Queue, QueueConfig};
///
/// let queue: Queue<String> =
///     Queue::with_config(QueueConfig::new().name("foos").metrics(Arc::new(NoopMetrics)));
/// assert_eq!(queue.name(), Some("foos"));
/// ```
#[derive(Clone, Default)]
pub struct QueueConfig {
    pub(crate) name: Option<String>,
    pub(crate) provider: Option<Arc<dyn MetricsProvider>>,
    pub(crate) runtime: Option<Handle>,
}

impl QueueConfig {
    /// An unnamed queue without metrics, running its timer on the caller's runtime.
    pub fn new() -> Self {
        Self::default()
    }

    /// Names the queue. Only named queues report metrics (as in client-go), and the name
    /// is what the provider receives, typically the `name` label of every series.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Installs a metrics provider. It takes effect only if the queue is also [named](Self::name).
    pub fn metrics(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// Runs the queue's background tasks (the timer of the delaying and priority queues, the
    /// unfinished-work refresh of a queue with metrics) on `handle`.
    ///
    /// Without it, they start on the runtime of the first call made from inside one
    /// (construction, `add_after` or `get`); a queue built outside any runtime therefore works
    /// as soon as it is used from one.
    pub fn runtime(mut self, handle: Handle) -> Self {
        self.runtime = Some(handle);
        self
    }

    /// The metrics sink this configuration yields: `Some` only for a named queue with a provider.
    pub(crate) fn queue_metrics(&self) -> Option<Arc<dyn QueueMetrics>> {
        match (&self.name, &self.provider) {
            (Some(name), Some(provider)) => Some(provider.queue_metrics(name)),
            _ => None,
        }
    }
}

impl fmt::Debug for QueueConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("metrics", &self.provider.is_some())
            .field("runtime", &self.runtime.is_some())
            .finish()
    }
}
