//! A watch stream: initial events or resume from history, live events in batches,
//! bookmarks (periodic, requested, held back by chaos), timeouts, drops and shutdown.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::{Bytes, BytesMut};
use futures::Stream;
use tokio::sync::broadcast::{self, error::RecvError, error::TryRecvError};
use tokio::sync::watch;
use tokio::time::Instant;

use super::filter::Filter;
use crate::api::format::Format;
use crate::api::repr::Repr;
use crate::api::table::TableWriter;
use crate::machinery::query::ListOptions;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::ApiError;
use crate::shared::Shared;
use crate::store::{Event, Reclaim, Stored};

/// Biggest chunk a watch writes at once when events are queued.
const BATCH_BYTES: usize = 64 * 1024;

/// How long a busy watch waits for more events before writing (the timer rounds it up to
/// its 1 ms tick). Only streams receiving events back to back wait; a lone event goes out
/// at once.
const COALESCE_DELAY: std::time::Duration = std::time::Duration::from_micros(500);

/// Counts a stream in [`Shared::open_watches`] for as long as it lives.
struct OpenWatch(Arc<Shared>);

impl OpenWatch {
    fn new(shared: Arc<Shared>) -> Self {
        shared.open_watches.fetch_add(1, Ordering::SeqCst);
        Self(shared)
    }
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        self.0.open_watches.fetch_sub(1, Ordering::SeqCst);
    }
}

struct WatchState {
    _open: OpenWatch,
    shared: Arc<Shared>,
    filter: Filter,
    pending: VecDeque<Bytes>,
    rx: Option<broadcast::Receiver<Arc<Event>>>,
    /// Events at or below this RV were already covered (initial state or replay).
    min_rv: u64,
    last_sent_rv: u64,
    deadline: Instant,
    next_bookmark: Instant,
    drop_rx: watch::Receiver<u64>,
    bookmark_rx: watch::Receiver<u64>,
    shutdown_rx: watch::Receiver<bool>,
    /// Where events this watch would free go (see [`Reclaim`]), and the ones gathered.
    reclaim: Arc<Reclaim>,
    last_refs: Vec<Arc<Event>>,
    done: bool,
    /// The last wake-up found more than one event: coalesce before writing.
    busy: bool,
    /// The initial-events-end bookmark still to send (at this RV) once the initial events
    /// are out.
    initial_end: Option<u64>,
    /// Chaos mode picked this watch to send its bookmarks late.
    slow_bookmarks: bool,
}

/// Starts a watch. Errors before the stream starts (unknown resource) are returned as
/// `Err`; everything after, including a too-old RV, is in-band. Objects go out in `repr`
/// (as a `Table` from `table` when the watch asked for tables), encoded as `format`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn start(
    shared: Arc<Shared>,
    info: Arc<ResourceInfo>,
    version: &str,
    ns: Option<String>,
    opts: ListOptions,
    repr: Repr,
    format: Format,
    table: Option<TableWriter>,
) -> Result<impl Stream<Item = Bytes> + Send + 'static, ApiError> {
    let key = info.key();
    let send_initial = match opts.send_initial_events {
        Some(v) => v,
        None => opts.rv_match.is_none() && opts.rv.is_none_or(|r| r == 0),
    };
    // With WatchList on, an RV-less watch is defaulted to a streaming list and so also gets
    // the initial-events-end bookmark; with it off, only the synthetic ADDED events.
    let end_bookmark = opts.send_initial_events == Some(true)
        || shared.watch_list_mode() == crate::shared::WatchListMode::Supported;
    let bookmarks = opts.bookmarks;
    // As upstream, a zero timeout means "use the server's default".
    let timeout = opts
        .timeout_seconds
        .filter(|t| *t > 0)
        .map(std::time::Duration::from_secs)
        .unwrap_or(shared.config.default_watch_timeout);
    let filter = Filter {
        ns,
        opts,
        repr,
        info: info.clone(),
        version: version.to_string(),
        format,
        table,
        headers_sent: AtomicBool::new(false),
    };
    let mut pending = VecDeque::new();
    let rx;
    let min_rv;
    let mut initial_end_bookmark = false;
    let reclaim;
    {
        let st = shared.state.lock();
        reclaim = st.reclaim.clone();
        let current = st.rv;
        let rs = st.resource(&key).ok_or_else(ApiError::unknown_path)?;
        if send_initial && filter.opts.rv.is_some_and(|n| n > current) {
            // Upstream waits ~3 s for its cache to catch up; here nothing newer can appear.
            rx = None;
            min_rv = current;
            let n = filter.opts.rv.unwrap_or_default();
            pending.push_back(filter.error(&crate::store::snapshot::too_large(n, current)));
        } else if send_initial {
            let objs: Vec<Stored> = rs
                .objects
                .values()
                .filter(|o| filter.matches(&o.obj))
                .cloned()
                .collect();
            rx = st.subscribe(&key);
            drop(st);
            for o in objs {
                pending.push_back(filter.stored_event("ADDED", &o));
            }
            min_rv = current;
            initial_end_bookmark = bookmarks && end_bookmark;
        } else {
            match filter.opts.rv {
                None | Some(0) => {
                    rx = st.subscribe(&key);
                    min_rv = current;
                }
                Some(n) => match st.watch_from(&key, n) {
                    Some(Ok((events, r))) => {
                        rx = Some(r);
                        min_rv = current.max(n);
                        drop(st);
                        let mut buf = BytesMut::new();
                        for ev in events {
                            filter.write_event(&ev, &mut buf);
                            if buf.len() >= BATCH_BYTES {
                                pending.push_back(buf.split().freeze());
                            }
                        }
                        if !buf.is_empty() {
                            pending.push_back(buf.freeze());
                        }
                    }
                    Some(Err(oldest)) => {
                        rx = None;
                        min_rv = current;
                        pending.push_back(filter.error(&ApiError::expired(format!(
                            "too old resource version: {n} ({oldest})"
                        ))));
                    }
                    None => return Err(ApiError::unknown_path()),
                },
            }
        }
    }
    let slow_bookmarks = bookmarks && shared.chaos.as_ref().is_some_and(|c| c.slow_bookmarks());
    let now = Instant::now();
    let mut drop_rx = shared.end_watches.subscribe();
    drop_rx.borrow_and_update();
    let mut shutdown_rx = shared.shutdown.subscribe();
    shutdown_rx.borrow_and_update();
    let mut bookmark_rx = shared.bookmark_now.subscribe();
    bookmark_rx.borrow_and_update();
    let state = WatchState {
        _open: OpenWatch::new(shared.clone()),
        next_bookmark: now + shared.config.bookmark_interval,
        shared,
        filter,
        pending,
        done: rx.is_none(),
        rx,
        min_rv,
        last_sent_rv: min_rv,
        deadline: now + timeout,
        drop_rx,
        bookmark_rx,
        shutdown_rx,
        reclaim,
        last_refs: Vec::new(),
        busy: false,
        initial_end: initial_end_bookmark.then_some(min_rv),
        slow_bookmarks,
    };
    Ok(futures::stream::unfold(state, next_chunk))
}

fn drain_pending(st: &mut WatchState) -> Bytes {
    let mut buf = BytesMut::new();
    while let Some(b) = st.pending.pop_front() {
        buf.extend_from_slice(&b);
        if buf.len() >= BATCH_BYTES {
            break;
        }
    }
    buf.freeze()
}

/// Appends an event to `buf` if this watcher should see it.
fn push_event(st: &mut WatchState, ev: &Event, buf: &mut BytesMut) {
    if ev.rv <= st.min_rv {
        return;
    }
    if st.filter.write_event(ev, buf) {
        st.last_sent_rv = ev.rv;
    }
}

/// Appends every event already queued (up to a batch) without waiting; returns how many
/// events were received.
fn drain_ready(st: &mut WatchState, buf: &mut BytesMut) -> usize {
    let mut received = 0;
    while buf.len() < BATCH_BYTES {
        let Some(rx) = st.rx.as_mut() else { break };
        match rx.try_recv() {
            Ok(ev) => {
                received += 1;
                push_event(st, &ev, buf);
                Reclaim::keep_if_last(&mut st.last_refs, ev);
            }
            Err(TryRecvError::Empty) => break,
            Err(TryRecvError::Lagged(_)) | Err(TryRecvError::Closed) => {
                st.done = true;
                break;
            }
        }
    }
    received
}

/// Under a sustained stream of events, waits a moment (shutdown and drops still end the
/// watch at once) so that the events coalesce into one write: one wake-up and one syscall
/// per batch instead of per event. Returns false when the watch must end.
async fn coalesce(st: &mut WatchState) -> bool {
    tokio::select! {
        biased;
        _ = st.shutdown_rx.changed() => false,
        _ = st.drop_rx.changed() => false,
        _ = tokio::time::sleep(COALESCE_DELAY) => true,
    }
}

/// Chaos's slow bookmarks: on a watch picked for them, waits a drawn delay before a
/// bookmark (events queue meanwhile). Returns false when the watch must end.
async fn hold_bookmark(st: &mut WatchState) -> bool {
    if !st.slow_bookmarks {
        return true;
    }
    let Some(delay) = st.shared.chaos.as_ref().and_then(|c| c.bookmark_delay()) else {
        return true;
    };
    tokio::select! {
        biased;
        _ = st.shutdown_rx.changed() => false,
        _ = st.drop_rx.changed() => false,
        _ = tokio::time::sleep(delay) => true,
    }
}

/// A BOOKMARK at the current RV, preceded by every event committed up to that RV that this
/// stream has not yet sent, so that a client resuming from the bookmark misses nothing.
/// Without the bookmark when the backlog does not fit one batch (or the watcher lagged):
/// the events go out and a later bookmark covers them. None when there is nothing to send.
fn bookmark_chunk(st: &mut WatchState) -> Option<Bytes> {
    // Events are broadcast under the state lock: every event up to `rv` is queued now.
    let rv = st.shared.state.lock().rv;
    let mut buf = BytesMut::new();
    while !st.done && buf.len() < BATCH_BYTES && drain_ready(st, &mut buf) > 0 {}
    st.reclaim.give(&mut st.last_refs);
    if !st.done && buf.len() < BATCH_BYTES {
        let rv = rv.max(st.last_sent_rv);
        st.last_sent_rv = rv;
        buf.extend_from_slice(&st.filter.bookmark(rv, false));
    }
    (!buf.is_empty()).then(|| buf.freeze())
}

async fn next_chunk(mut st: WatchState) -> Option<(Bytes, WatchState)> {
    loop {
        if !st.pending.is_empty() {
            let chunk = drain_pending(&mut st);
            return Some((chunk, st));
        }
        if let Some(rv) = st.initial_end.take() {
            if !hold_bookmark(&mut st).await {
                return None;
            }
            let chunk = st.filter.bookmark(rv, true);
            return Some((chunk, st));
        }
        if st.done {
            return None;
        }
        let rx = st.rx.as_mut()?;
        let bookmarks = st.filter.opts.bookmarks;
        tokio::select! {
            biased;
            _ = st.shutdown_rx.changed() => return None,
            _ = st.drop_rx.changed() => return None,
            _ = tokio::time::sleep_until(st.deadline) => {
                let chunk = if bookmarks { bookmark_chunk(&mut st) } else { None };
                st.done = true;
                return chunk.map(|c| (c, st));
            }
            _ = st.bookmark_rx.changed(), if bookmarks => {
                if !hold_bookmark(&mut st).await {
                    return None;
                }
                if let Some(chunk) = bookmark_chunk(&mut st) {
                    return Some((chunk, st));
                }
            }
            _ = tokio::time::sleep_until(st.next_bookmark), if bookmarks => {
                st.next_bookmark = Instant::now() + st.shared.config.bookmark_interval;
                let rv = st.shared.state.lock().rv;
                if rv > st.last_sent_rv {
                    if !hold_bookmark(&mut st).await {
                        return None;
                    }
                    if let Some(chunk) = bookmark_chunk(&mut st) {
                        return Some((chunk, st));
                    }
                }
            }
            res = rx.recv() => match res {
                Ok(ev) => {
                    let mut buf = BytesMut::new();
                    push_event(&mut st, &ev, &mut buf);
                    Reclaim::keep_if_last(&mut st.last_refs, ev);
                    let mut received = 1 + drain_ready(&mut st, &mut buf);
                    if !st.done && buf.len() < BATCH_BYTES / 8 {
                        if st.busy {
                            if !coalesce(&mut st).await {
                                return None;
                            }
                        } else {
                            // Give a busy writer one scheduling turn.
                            tokio::task::yield_now().await;
                        }
                        received += drain_ready(&mut st, &mut buf);
                    }
                    // Events keep arriving while this one is handled: the stream is busy.
                    st.busy = received > 1;
                    st.reclaim.give(&mut st.last_refs);
                    if !buf.is_empty() {
                        return Some((buf.freeze(), st));
                    }
                }
                // A watcher that fell too far behind, or a resource that stopped being
                // served: end the stream cleanly; clients re-watch from their last RV.
                Err(RecvError::Lagged(n)) => {
                    tracing::warn!(resource = %st.filter.info.qualified(), skipped = n, "watcher too slow; closing");
                    return None;
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}
