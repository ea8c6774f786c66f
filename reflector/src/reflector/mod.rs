//! `Reflector`: its public face and its run loop, the one place that decides what happens next
//! (client-go's `reflector.go`: `Run`, `ListAndWatch`, the retry rules of `watch` and
//! `watchList`). The parts it drives decide nothing and call nothing back:
//!
//! - `list`: one paged list into the store;
//! - `watch_list`: one streaming list into the store;
//! - `watch`: one steady-state watch, with the resync timer;
//! - `apply`: one watch item into a store (for `watch` and `watch_list`);
//! - `shared`: what they all read (lister-watcher, store, options, last synced resource
//!   version, error reporting).

mod apply;
mod list;
mod shared;
mod watch;
mod watch_list;

pub use apply::INITIAL_EVENTS_END_ANNOTATION;

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use indexer::Store;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use self::shared::Shared;
use self::watch::{ResyncTimer, WatchEnd};
use crate::backoff::BackoffState;
use crate::{Error, ListerWatcher, Object, ReflectorOptions, WatchStream};

/// Keeps a [`Store`] equal to the server's state of one collection: lists it, then watches
/// it, and recovers from every failure by rewatching or relisting as client-go does.
///
/// - **Streaming list**, the default way to list (client-go's `WatchListClient`, on by default
///   since 1.35; paged lists instead with [`ReflectorOptions::streaming_list`]`(false)`): one
///   watch with `sendInitialEvents` from the last synced RV ("" the first time: a consistent
///   read of the latest state); its initial events are collected and applied with one
///   `replace` at the `k8s.io/initial-events-end` bookmark, and the same stream goes on as the
///   watch. When it fails the same attempt lists in pages instead, with no backoff step in
///   between. A server that showed it has no streaming lists (it refused `sendInitialEvents`
///   with 400 or 422, or answered with a plain watch) is remembered: later relists of the same
///   [`run`](Self::run) page at once. After any other failure (a timeout, a broken stream, a
///   5xx) the next relist tries a streaming list again. Two differences from client-go, whose
///   fallback is otherwise the same: client-go asks for a streaming list again at every relist
///   even after a refusal, and a stream that ends before the end bookmark makes it retry the
///   streaming list (with no limit) where this reflector lists in pages.
/// - **Paged list** (where streaming lists are off or fail): from RV "0" the first time
///   (served from the server's watch cache), from the last synced RV afterwards (never going
///   back in time), from "" (latest) right after a 410 or "Too large resource version".
///   Paginated by the page-size rules of [`ReflectorOptions::page_size`]; an expired continue
///   token falls back to one full list. Each page goes into the store as it arrives
///   (`Store::replace_in_pages`), and the finished list replaces the store's content; a list
///   that fails part-way abandons its replace, so the store deletes nothing because of it and
///   the next list completes it.
/// - **Watch** from the last synced RV with bookmarks: events and bookmarks are applied as
///   they arrive and advance the RV
///   ([`last_sync_resource_version`](Self::last_sync_resource_version)); a normal close
///   rewatches at once; 429 or connection refused rewatch after a backoff step; 410 and every
///   other failure end the attempt, which costs one backoff step and relists. A watch that
///   closes within a second without any event counts as a failure.
///
/// Every failure reaches the [error handler](ReflectorOptions::error_handler); none stops the
/// reflector. [`run`](Self::run) returns only when its shutdown token fires.
pub struct Reflector<K> {
    shared: Shared<K>,
}

impl<K> Debug for Reflector<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("resource", &self.shared.description)
            .field(
                "last_sync_resource_version",
                &self.shared.last_sync_resource_version(),
            )
            .field("options", &self.shared.options)
            .finish()
    }
}

/// What one `run` call remembers between attempts.
struct RunState {
    backoff: BackoffState,
    rng: fastrand::Rng,
    /// Set once an RV "0" list came back paginated: the server has no watch cache for this
    /// resource, so later lists page too.
    paginated_result: bool,
    /// The last synced RV cannot be served (410 or too large): the next list or streaming
    /// list asks for the latest state ("").
    rv_unavailable: bool,
    /// Whether the next attempt tries a streaming list: the option, until the server shows
    /// that it has none.
    streaming: bool,
}

impl RunState {
    /// A random `timeoutSeconds` for the next watch: in `[min, 2·min)`.
    fn watch_timeout_secs(&mut self, min: Duration) -> u32 {
        let min = u32::try_from(min.as_secs().max(1)).unwrap_or(u32::MAX / 2);
        self.rng.u32(min..min.saturating_mul(2))
    }
}

impl<K> Reflector<K>
where
    K: Object,
{
    /// A reflector that lists and watches through `lister_watcher` into `store`.
    pub fn new(
        lister_watcher: Arc<dyn ListerWatcher<K>>,
        store: Arc<dyn Store<K>>,
        options: ReflectorOptions,
    ) -> Self {
        Self {
            shared: Shared::new(lister_watcher, store, options),
        }
    }

    /// The resource version of the last list, or of the last watch event or bookmark applied
    /// ("" before the first list). It may run ahead of what consumers of the store processed.
    pub fn last_sync_resource_version(&self) -> String {
        self.shared.last_sync_resource_version()
    }

    /// Lists and watches until `shutdown` fires, then returns (dropping any open watch).
    ///
    /// Each attempt lists (or stream-lists) and then watches; when an attempt ends, the
    /// failure goes to the error handler and the reflector waits one backoff step before the
    /// next attempt, which relists. Run one reflector at a time: two concurrent runs of the
    /// same reflector would both write its store and its resource version.
    pub async fn run(&self, shutdown: CancellationToken) {
        let span = tracing::info_span!("reflector", resource = %self.shared.description);
        async {
            let seed = self.shared.options.jitter_seed;
            let rng = || seed.map_or_else(fastrand::Rng::new, fastrand::Rng::with_seed);
            let mut state = RunState {
                backoff: BackoffState::new(self.shared.options.backoff.clone(), rng()),
                rng: rng().fork(),
                paginated_result: false,
                rv_unavailable: false,
                streaming: self.shared.options.streaming_list,
            };
            tracing::debug!("reflector started");
            loop {
                let error = tokio::select! {
                    biased;
                    () = shutdown.cancelled() => break,
                    error = self.list_and_watch(&mut state) => error,
                };
                self.shared.report(&error);
                tokio::select! {
                    biased;
                    () = shutdown.cancelled() => break,
                    () = self.backoff(&mut state) => {}
                }
            }
            tracing::debug!("reflector stopped");
        }
        .instrument(span)
        .await
    }

    /// One attempt: list (or stream-list), then watch until something requires a relist;
    /// returns that reason.
    async fn list_and_watch(&self, state: &mut RunState) -> Error {
        let mut stream = None;
        if state.streaming {
            match self.stream_list(state).await {
                Ok(s) => stream = Some(s),
                Err(error) if watch_list::shows_no_streaming_support(&error) => {
                    tracing::info!(%error, "the server has no streaming lists; listing in pages from now on");
                    self.shared.report_quietly(&error);
                    state.streaming = false;
                }
                Err(error) => {
                    tracing::warn!(%error, "streaming list failed; falling back to a paginated list");
                    self.shared.report_quietly(&error);
                }
            }
        }
        if stream.is_none()
            && let Err(error) = self.list(state).await
        {
            return error;
        }
        self.watch(state, stream).await
    }

    /// The resource version a list starts from: "" (latest) when the last synced one cannot
    /// be served, "0" (any, from the watch cache) before the first list, else the last synced
    /// one (never going back in time).
    fn relist_resource_version(&self, state: &RunState) -> String {
        if state.rv_unavailable {
            return String::new();
        }
        match self.shared.last_sync_resource_version() {
            rv if rv.is_empty() => "0".to_owned(),
            rv => rv,
        }
    }

    /// The paged list: at the relist resource version, and at once again from the latest state
    /// if that version is gone or too new.
    async fn list(&self, state: &mut RunState) -> Result<(), Error> {
        let resource_version = self.relist_resource_version(state);
        let listed = match list::fetch(&self.shared, &resource_version, &mut state.paginated_result)
            .await
        {
            Err(error) if error.is_expired() || error.is_too_large_resource_version() => {
                tracing::info!(%error, resource_version, "cannot list at the last synced resource version; listing the latest state");
                self.shared.report_quietly(&error);
                state.rv_unavailable = true;
                list::fetch(&self.shared, "", &mut state.paginated_result).await
            }
            result => result,
        }?;
        state.rv_unavailable = false;
        listed.commit()
    }

    /// The streaming list: from the last synced resource version ("" the first time, or when
    /// it cannot be served); 429 and refused connections retry after a backoff step, a gone or
    /// too new version retries from the latest state. Any other failure is returned: the caller
    /// falls back to a paged list.
    async fn stream_list(&self, state: &mut RunState) -> Result<WatchStream<K>, Error> {
        loop {
            let resource_version = if state.rv_unavailable {
                String::new()
            } else {
                self.shared.last_sync_resource_version()
            };
            let timeout = state.watch_timeout_secs(self.shared.options.watch_timeout);
            match watch_list::stream_list(&self.shared, &resource_version, timeout).await {
                Ok(stream) => {
                    state.rv_unavailable = false;
                    return Ok(stream);
                }
                Err(error) if error.is_retriable_watch_error() => {
                    self.shared.report(&error);
                    self.backoff(state).await;
                }
                Err(error)
                    if (error.is_expired() || error.is_too_large_resource_version())
                        && !state.rv_unavailable =>
                {
                    tracing::info!(%error, %resource_version, "cannot stream-list from the last synced resource version; asking for the latest state");
                    self.shared.report_quietly(&error);
                    state.rv_unavailable = true;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// Watches until a relist is needed and returns why: a normal close rewatches at once, 429
    /// and refused connections rewatch after a backoff step, anything else ends the attempt.
    /// `stream` is a streaming list's stream to continue, if any.
    async fn watch(&self, state: &mut RunState, mut stream: Option<WatchStream<K>>) -> Error {
        let mut resync = ResyncTimer::new(self.shared.options.resync_period);
        loop {
            let started = Instant::now();
            let stream = match stream.take() {
                Some(stream) => stream,
                None => {
                    let timeout = state.watch_timeout_secs(self.shared.options.watch_timeout);
                    match watch::open(&self.shared, timeout).await {
                        Ok(stream) => stream,
                        Err(error) if error.is_retriable_watch_error() => {
                            self.shared.report(&error);
                            self.backoff(state).await;
                            continue;
                        }
                        Err(error) => return error,
                    }
                }
            };
            match watch::handle(&self.shared, stream, &mut resync, started).await {
                WatchEnd::Closed => {}
                WatchEnd::Failed(error) if error.is_retriable_watch_error() => {
                    self.shared.report(&error);
                    self.backoff(state).await;
                }
                WatchEnd::Failed(error) => return error,
            }
        }
    }

    /// Waits one backoff step (after telling the observer about it).
    async fn backoff(&self, state: &mut RunState) {
        let step = state.backoff.next_step(Instant::now());
        if let Some(observer) = &self.shared.options.on_backoff {
            observer(&step);
        }
        tracing::debug!(attempt = step.attempt, wait = ?step.wait, "backing off");
        tokio::time::sleep(step.wait).await;
    }
}
