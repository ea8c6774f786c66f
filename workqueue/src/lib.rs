//! Work queues that drive Kubernetes reconcilers, after client-go's `util/workqueue`.
//!
//! Event handlers add the keys of objects that changed; a pool of workers takes keys out,
//! reconciles them and marks them done. The queue makes that safe and cheap: a key waiting in
//! the queue is stored once however often it is added, a key being reconciled is never handed
//! to a second worker, and a key added while it is being reconciled is queued again as soon as
//! its worker is done, so no change is lost. Failed keys are retried after a backoff chosen by
//! a [`RateLimiter`].
//!
//! # Which queue
//!
//! * [`Queue`]: the dedup-and-exclusive FIFO on its own. Needs no runtime.
//! * [`DelayingQueue`]: a `Queue` plus [`add_after`](DelayingQueue::add_after), driven by one
//!   tokio timer task.
//! * [`RateLimitingQueue`]: a `DelayingQueue` plus
//!   [`add_rate_limited`](RateLimitingQueue::add_rate_limited) /
//!   [`forget`](RateLimitingQueue::forget) / [`num_requeues`](RateLimitingQueue::num_requeues):
//!   what a controller uses. [`default_controller_rate_limiter`] is client-go's default
//!   (per-item exponential backoff 5 ms → 1000 s, and a shared 10 qps / burst 100 bucket).
//! * [`PriorityQueue`]: a rate-limiting queue whose every add carries a [`Priority`] (and, in
//!   [`AddOptions`], an optional delay and whether it is a rate-limited retry); workers get the
//!   highest-priority ready item first, first in, first out within one priority.
//!   controller-runtime's priority queue: it lets a real change overtake the keys an informer's
//!   initial list or a resync queued at [`Priority::LOW`]. An item added again keeps the higher
//!   priority and the earlier ready time; see its documentation for where it differs from the
//!   plain queues.
//!
//! All four are cheap handles: clone one to share the queue between workers and handlers.
//! Code that drives a queue can be written once against the queue traits, one per level as in
//! client-go: [`WorkQueue`] (every queue), [`DelayingWorkQueue`], [`RateLimitingWorkQueue`] and
//! [`PriorityWorkQueue`] (the priority queue, or the plain rate-limiting queue ignoring
//! priorities).
//! Shutting down stops adds; workers still receive what is queued, then `None`.
//! [`shut_down_with_drain`](Queue::shut_down_with_drain) waits until everything queued and in
//! flight is done. Named queues report to [`QueueMetrics`] hooks ([`QueueConfig`]). All
//! waiting uses [`tokio::time`], so tests can run with paused time.
//!
//! # Example: two workers and a retry
//!
//! ```
//! use workqueue::{RateLimitingQueue, default_controller_rate_limiter};
//!
//! /// Pretend reconciler: "default/flaky" fails on its first two attempts.
//! fn reconcile(key: &str, failures_so_far: usize) -> Result<(), String> {
//!     if key == "default/flaky" && failures_so_far < 2 {
//!         return Err(format!("{key}: not ready yet"));
//!     }
//!     Ok(())
//! }
//!
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() {
//!     let queue: RateLimitingQueue<String> =
//!         RateLimitingQueue::new(default_controller_rate_limiter());
//!     let (succeeded, mut successes) = tokio::sync::mpsc::unbounded_channel();
//!
//!     let workers: Vec<_> = (0..2)
//!         .map(|_| {
//!             let queue = queue.clone();
//!             let succeeded = succeeded.clone();
//!             tokio::spawn(async move {
//!                 // `None` once the queue is shut down and empty.
//!                 while let Some(key) = queue.get().await {
//!                     match reconcile(&key, queue.num_requeues(&key)) {
//!                         Ok(()) => {
//!                             // Success: clear the key's backoff history.
//!                             queue.forget(&key);
//!                             let _ = succeeded.send(key.clone());
//!                         }
//!                         // Failure: retry after 5 ms, then 10 ms, 20 ms, …
//!                         Err(_) => queue.add_rate_limited(key.clone()),
//!                     }
//!                     // Always: release the key so it can be handed out again.
//!                     queue.done(&key);
//!                 }
//!             })
//!         })
//!         .collect();
//!
//!     for key in ["default/a", "default/b", "default/flaky"] {
//!         queue.add(key.to_string());
//!     }
//!     for _ in 0..3 {
//!         successes.recv().await;
//!     }
//!     assert_eq!(queue.num_requeues(&"default/flaky".to_string()), 0);
//!
//!     queue.shut_down_with_drain().await;
//!     for worker in workers {
//!         worker.await.unwrap();
//!     }
//! }
//! ```
//!
//! # Differences from client-go
//!
//! * A stray [`done`](Queue::done) for an item that is not being processed is ignored (client-go
//!   may queue a duplicate).
//! * [`shut_down_with_drain`](Queue::shut_down_with_drain) returns only when the queue *and* the
//!   in-flight set are empty.
//! * The [`TokenBucket`] caps the delay it hands out (kubernetes/kubernetes#104554).
//! * [`add_rate_limited`](RateLimitingQueue::add_rate_limited) for an item already waiting for
//!   its backoff counts no new failure (kubernetes/kubernetes#132805).
//! * The delaying queue has one timer and no 10 s heartbeat, and `add_after` never blocks.
//! * [`get`](Queue::get) takes part in tokio's cooperative scheduling, and `add` never waits
//!   for the queue's lock: an add that finds the queue busy leaves its item to the thread that
//!   holds it.
//!
//! # Differences from controller-runtime's priority queue
//!
//! * An item re-added while it is being processed is queued at its `done`, at the back of its
//!   priority, as in the plain queue (controller-runtime: in its place from the re-add).
//! * A rate-limited add of an item that is already ready or waiting asks the rate limiter
//!   nothing (controller-runtime counts a failure), as in the rate-limiting queue.
//! * [`shut_down_with_drain`](PriorityQueue::shut_down_with_drain) drains (controller-runtime
//!   just shuts down), and priorities lie within [`Priority::MIN`] ..= [`Priority::MAX`].
//!
//! # Errors
//!
//! Only building a rate limiter or a priority can fail ([`Error`]: a token bucket with a rate
//! that is not a positive finite number, or a zero burst; a priority outside
//! [`Priority::MIN`] ..= [`Priority::MAX`]); fix the configuration, retrying cannot help. Queue
//! operations cannot fail: adds after shutdown are dropped by design and `get` returns `None`
//! once the queue is shut down and empty.

mod add_options;
mod config;
mod delaying;
mod error;
mod hash;
mod interface;
mod metrics;
mod priority;
mod queue;
pub mod rate_limiter;
mod rate_limiting;
mod task;

pub use add_options::{AddOptions, Priority};
pub use config::QueueConfig;
pub use delaying::DelayingQueue;
pub use error::Error;
pub use interface::{DelayingWorkQueue, PriorityWorkQueue, RateLimitingWorkQueue, WorkQueue};
pub use metrics::{MetricsProvider, NoopMetrics, QueueMetrics, UNFINISHED_WORK_UPDATE_PERIOD};
pub use priority::PriorityQueue;
pub use queue::Queue;
pub use rate_limiter::{
    ItemExponentialFailure, ItemFastSlow, MaxOf, RateLimiter, TokenBucket, WithMaxWait,
    default_controller_rate_limiter,
};
pub use rate_limiting::RateLimitingQueue;
