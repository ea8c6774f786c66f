//! `Reflector`: the run loop (list, then watch; back off and relist on failure) and the list
//! path (client-go's `reflector.go`, `ListAndWatch` and `list`).

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use indexer::{Backpressure, ObjectKeyRef, ReplaceInPages, Store};
use parking_lot::RwLock;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::backoff::BackoffState;
use crate::options::DEFAULT_PAGE_SIZE;
use crate::pager::PageSink;
use crate::{Error, ListerWatcher, Object, ReflectorOptions, pager};

/// Keeps a [`Store`] equal to the server's state of one collection: lists it, then watches
/// it, and recovers from every failure by rewatching or relisting as client-go does.
///
/// - **List**: from RV "0" the first time (served from the server's watch cache), from the
///   last synced RV afterwards (never going back in time), from "" (latest) right after a
///   410 or "Too large resource version". Paginated by the page-size rules of
///   [`ReflectorOptions::page_size`]; an expired continue token falls back to one full list.
///   Each page goes into the store as it arrives (`Store::replace_in_pages`), and the finished
///   list replaces the store's content; a list that fails part-way abandons its replace, so
///   the store deletes nothing because of it and the next list completes it.
/// - **Watch** from the last synced RV with bookmarks: events are applied as they arrive and
///   advance the RV; a normal close rewatches at once; 429 or connection refused rewatch
///   after a backoff step; 410 and every other failure end the attempt, which costs one
///   backoff step and relists. A watch that closes within a second without any event counts
///   as a failure.
/// - **Streaming list** (opt-in, [`ReflectorOptions::streaming_list`]): one watch with
///   `sendInitialEvents` from the last synced RV; its initial events are collected and applied
///   with one `replace` at the `k8s.io/initial-events-end` bookmark, and the same stream goes on
///   as the watch. Without that bookmark the reflector falls back to a paginated list.
///
/// Every failure reaches the [error handler](ReflectorOptions::error_handler); none stops the
/// reflector. [`run`](Self::run) returns only when its shutdown token fires.
pub struct Reflector<K> {
    pub(crate) lister_watcher: Arc<dyn ListerWatcher<K>>,
    pub(crate) store: Arc<dyn Store<K>>,
    pub(crate) options: ReflectorOptions,
    description: String,
    last_sync_rv: RwLock<String>,
}

impl<K> Debug for Reflector<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reflector")
            .field("resource", &self.description)
            .field("last_sync_resource_version", &*self.last_sync_rv.read())
            .field("options", &self.options)
            .finish()
    }
}

/// What one `run` call remembers between attempts.
pub(crate) struct RunState {
    pub(crate) backoff: BackoffState,
    rng: fastrand::Rng,
    /// Set once an RV "0" list came back paginated: the server has no watch cache for this
    /// resource, so later lists page too.
    paginated_result: bool,
    /// The last synced RV cannot be served (410 or too large): the next list or streaming
    /// list asks for the latest state ("").
    pub(crate) rv_unavailable: bool,
}

impl RunState {
    /// A random `timeoutSeconds` for the next watch: in `[min, 2·min)`.
    pub(crate) fn watch_timeout_secs(&mut self, min: Duration) -> u32 {
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
            description: lister_watcher.describe(),
            lister_watcher,
            store,
            options,
            last_sync_rv: RwLock::new(String::new()),
        }
    }

    /// The resource version of the last list, or of the last watch event or bookmark applied
    /// ("" before the first list). It may run ahead of what consumers of the store processed.
    pub fn last_sync_resource_version(&self) -> String {
        self.last_sync_rv.read().clone()
    }

    /// Lists and watches until `shutdown` fires, then returns (dropping any open watch).
    ///
    /// Each attempt lists (or stream-lists) and then watches; when an attempt ends, the
    /// failure goes to the error handler and the reflector waits one backoff step before the
    /// next attempt, which relists. Run one reflector at a time: two concurrent runs of the
    /// same reflector would both write its store and its resource version.
    pub async fn run(&self, shutdown: CancellationToken) {
        let span = tracing::info_span!("reflector", resource = %self.description);
        async {
            let seed = self.options.jitter_seed;
            let rng = || seed.map_or_else(fastrand::Rng::new, fastrand::Rng::with_seed);
            let mut state = RunState {
                backoff: BackoffState::new(self.options.backoff.clone(), rng()),
                rng: rng().fork(),
                paginated_result: false,
                rv_unavailable: false,
            };
            tracing::debug!("reflector started");
            loop {
                let error = tokio::select! {
                    biased;
                    () = shutdown.cancelled() => break,
                    error = self.list_and_watch(&mut state) => error,
                };
                self.report(&error);
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
        if self.options.streaming_list {
            match self.watch_list(state).await {
                Ok(s) => stream = Some(s),
                Err(error) => {
                    tracing::warn!(%error, "streaming list failed; falling back to a paginated list");
                    self.report_quietly(&error);
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

    /// The list path: choose the RV, page through, replace the store's content.
    async fn list(&self, state: &mut RunState) -> Result<(), Error> {
        let resource_version = if state.rv_unavailable {
            String::new()
        } else {
            match self.last_sync_resource_version() {
                rv if rv.is_empty() => "0".to_string(),
                rv => rv,
            }
        };
        match self.list_at(&resource_version, state).await {
            Err(error) if error.is_expired() || error.is_too_large_resource_version() => {
                tracing::info!(%error, resource_version, "cannot list at the last synced resource version; listing the latest state");
                self.report_quietly(&error);
                state.rv_unavailable = true;
                self.list_at("", state).await
            }
            result => result,
        }
    }

    /// Lists at `resource_version` and replaces the store's content with the result.
    async fn list_at(&self, resource_version: &str, state: &mut RunState) -> Result<(), Error> {
        let started = Instant::now();
        let page_size = match self.options.page_size {
            Some(forced) => forced,
            None if state.paginated_result => DEFAULT_PAGE_SIZE,
            // "Not older than" a known RV is served from the watch cache without pages; an
            // exact-RV paged read would hit the server's storage instead.
            None if !resource_version.is_empty() && resource_version != "0" => 0,
            None => DEFAULT_PAGE_SIZE,
        };
        let mut pages = StorePages {
            reflector: self,
            replace: self.store.replace_in_pages(),
            count: 0,
        };
        let list = pager::list(
            &self.lister_watcher,
            resource_version,
            page_size,
            self.options.compact_objects,
            &mut pages,
        )
        .await?;
        if resource_version == "0" && list.paginated {
            state.paginated_result = true;
        }
        state.rv_unavailable = false;
        let count = pages.count;
        pages
            .replace
            .finish(list.resource_version.clone())
            .map_err(|source| Error::Store {
                operation: "replace",
                source,
            })?;
        tracing::debug!(
            count,
            pages = list.pages,
            resource_version = %list.resource_version,
            requested = resource_version,
            duration = ?started.elapsed(),
            "listed"
        );
        self.set_last_sync_resource_version(list.resource_version);
        Ok(())
    }

    /// Replaces the store's content with a complete list at `resource_version`.
    pub(crate) fn replace_store(
        &self,
        items: Vec<Arc<K>>,
        resource_version: String,
    ) -> Result<(), Error> {
        self.store
            .replace(items, resource_version)
            .map_err(|source| Error::Store {
                operation: "replace",
                source,
            })
    }

    pub(crate) fn set_last_sync_resource_version(&self, resource_version: String) {
        *self.last_sync_rv.write() = resource_version;
    }

    /// Waits one backoff step (after telling the observer about it).
    pub(crate) async fn backoff(&self, state: &mut RunState) {
        let step = state.backoff.next_step(Instant::now());
        if let Some(observer) = &self.options.on_backoff {
            observer(&step);
        }
        tracing::debug!(attempt = step.attempt, wait = ?step.wait, "backing off");
        tokio::time::sleep(step.wait).await;
    }

    /// Logs a failure (expired resource versions are routine: info, the rest warn) and hands
    /// it to the error handler.
    pub(crate) fn report(&self, error: &Error) {
        if error.is_expired() {
            tracing::info!(%error, "resource version expired; relisting");
        } else {
            tracing::warn!(%error, "reflector failure");
        }
        self.report_quietly(error);
    }

    /// Hands a failure that was already logged to the error handler.
    pub(crate) fn report_quietly(&self, error: &Error) {
        if let Some(handler) = &self.options.error_handler {
            handler(error);
        }
    }
}

/// The pages of a list on their way into the store: objects without a usable key are reported
/// and left out, the rest wrapped in their `Arc` once and handed to the store's replace as each
/// page arrives. Dropped without `finish` (the list failed), it abandons the replace.
struct StorePages<'a, K> {
    reflector: &'a Reflector<K>,
    replace: Box<dyn ReplaceInPages<K> + 'a>,
    /// Objects handed to the store so far.
    count: usize,
}

impl<K> PageSink<K> for StorePages<'_, K>
where
    K: Object,
{
    fn page(&mut self, items: Vec<K>) -> Result<(), Error> {
        let mut objects = Vec::with_capacity(items.len());
        for obj in items {
            match ObjectKeyRef::of(&obj).and_then(|key| key.validate()) {
                Ok(()) => objects.push(Arc::new(obj)),
                Err(source) => self.reflector.report(&Error::MissingMetadata {
                    event: "list",
                    source,
                }),
            }
        }
        self.count += objects.len();
        self.replace.page(objects).map_err(|source| Error::Store {
            operation: "replace",
            source,
        })
    }

    fn restart(&mut self) {
        self.replace = self.reflector.store.replace_in_pages();
        self.count = 0;
    }

    fn room(&self) -> Option<Backpressure<'_>> {
        self.reflector.store.backpressure()
    }
}
