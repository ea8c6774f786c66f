//! Paginated lists (client-go's `tools/pager`): follow continue tokens, keep the first page's
//! resource version, and fall back to one full list when a continue token expires. Each batch
//! of items goes to a [`PageSink`] as soon as it is decoded, so no list is ever held whole here.
//!
//! Pages overlap: each page is requested and decoded by a task of its own, and the next page is
//! asked for as soon as the current page's metadata (its continue token) has arrived, before
//! its items are decoded. So the next page's transfer and decoding run beside the current
//! page's, at most one page ahead (memory stays at about two pages), while the sink still
//! receives every item in list order.

use std::sync::Arc;

use futures::StreamExt;
use kube::api::{ListMeta, ListParams};
use tokio::sync::mpsc;

use indexer::Backpressure;

use crate::{Error, ListPart, ListerWatcher, Object};

/// Parts of a page a page task may decode ahead of the sink (a body frame's items each).
const PARTS_AHEAD: usize = 256;

/// Where the pages of a list go, in order.
pub(crate) trait PageSink<K> {
    /// The next items of the list (part of a page, or a whole page).
    fn page(&mut self, items: Vec<K>) -> Result<(), Error>;

    /// The list starts over: a continue token expired, and one full list follows. Forget the
    /// pages received so far (they came from an older snapshot).
    fn restart(&mut self);

    /// Whether to wait before taking the next page: the store's
    /// [`backpressure`](indexer::Store::backpressure), if it has any.
    fn room(&self) -> Option<Backpressure<'_>>;
}

/// What a completed (possibly paginated) list was.
pub(crate) struct ListSummary {
    /// The first page's resource version: every page comes from its snapshot.
    pub(crate) resource_version: String,
    /// More than one page was needed.
    pub(crate) paginated: bool,
    /// Requests made.
    pub(crate) pages: usize,
}

/// One page task's messages: a part of the page, or the end of the page (`None`).
type PageMessage<K> = Option<Result<ListPart<K>, Error>>;

/// Requests one page with `params` in a task of its own, which decodes it into the returned
/// channel as it arrives. The task ends when the page ends, fails, or the receiver is dropped.
fn spawn_page<K: Object>(
    lister_watcher: &Arc<dyn ListerWatcher<K>>,
    params: ListParams,
    compact: bool,
) -> mpsc::Receiver<PageMessage<K>> {
    let (tx, rx) = mpsc::channel(PARTS_AHEAD);
    let lister_watcher = Arc::clone(lister_watcher);
    tokio::spawn(async move {
        let mut parts = match lister_watcher.list_stream(&params).await {
            Ok(parts) => parts,
            Err(error) => {
                let _ = tx.send(Some(Err(error))).await;
                return;
            }
        };
        while let Some(mut part) = parts.next().await {
            if let (true, Ok(ListPart::Items(items))) = (compact, &mut part) {
                // Compact copies; the originals, with their slack, are freed here.
                *items = items.to_vec();
            }
            let failed = part.is_err();
            if tx.send(Some(part)).await.is_err() || failed {
                return;
            }
        }
        let _ = tx.send(None).await;
    });
    rx
}

/// How one page went.
enum Page {
    /// Complete.
    Done,
    /// Failed with this error (`Expired` when the server rejected its continue token).
    Failed(Error),
    /// The page task went away without finishing the page.
    Lost,
}

/// Lists everything at `resource_version` ("" = latest) in pages of `page_size` (0 = one
/// request without a limit), handing the items to `sink` in list order. Fails with
/// [`Error::MissingResourceVersion`] before any item reaches `sink` when the server sends no
/// resource version.
/// With `compact`, every item is replaced by its clone (see
/// [`ReflectorOptions::compact_objects`](crate::ReflectorOptions::compact_objects)).
pub(crate) async fn list<K: Object>(
    lister_watcher: &Arc<dyn ListerWatcher<K>>,
    resource_version: &str,
    page_size: u32,
    compact: bool,
    sink: &mut (dyn PageSink<K> + Send),
) -> Result<ListSummary, Error> {
    let first = ListParams {
        resource_version: Some(resource_version.to_string()).filter(|rv| !rv.is_empty()),
        limit: Some(page_size).filter(|&n| n > 0),
        ..ListParams::default()
    };
    let mut summary: Option<ListSummary> = None;
    let mut current = spawn_page(lister_watcher, first.clone(), compact);
    let mut continued = false;
    loop {
        // A store whose consumer fell behind has the next page wait (it is being fetched and
        // decoded meanwhile, one page ahead), so a relist never queues the whole list at once.
        if let Some(room) = sink.room() {
            room.await;
        }
        let mut next = None;
        let page = read_page(&mut current, summary.is_none(), sink, |meta| {
            let summary = match &mut summary {
                Some(summary) => summary,
                None => summary.insert(ListSummary {
                    resource_version: list_resource_version(meta)?,
                    paginated: false,
                    pages: 0,
                }),
            };
            summary.pages += 1;
            if let Some(token) = meta.continue_.clone().filter(|token| !token.is_empty()) {
                // The server rejects a resource version together with a continue token.
                let params = ListParams {
                    continue_token: Some(token),
                    resource_version: None,
                    version_match: None,
                    ..first.clone()
                };
                next = Some(spawn_page(lister_watcher, params, compact));
                summary.paginated = true;
            }
            Ok(())
        })
        .await;
        match page {
            Page::Done => {}
            Page::Failed(error) if error.is_expired() && continued => {
                // The snapshot behind the continue token was compacted away: one full,
                // unpaginated list at the original resource version replaces what we have.
                let pages = summary.as_ref().map_or(0, |s| s.pages);
                tracing::info!(%error, pages, "continue token expired; listing without pagination");
                sink.restart();
                return full_list(lister_watcher, first, pages, compact, sink).await;
            }
            Page::Failed(error) => return Err(error),
            Page::Lost => return Err(lost()),
        }
        match next {
            Some(next_page) => {
                current = next_page;
                continued = true;
            }
            None => return summary.ok_or(Error::MissingResourceVersion),
        }
    }
}

/// The one full list after an expired continue token.
async fn full_list<K: Object>(
    lister_watcher: &Arc<dyn ListerWatcher<K>>,
    first: ListParams,
    pages: usize,
    compact: bool,
    sink: &mut (dyn PageSink<K> + Send),
) -> Result<ListSummary, Error> {
    let full = ListParams {
        limit: None,
        ..first
    };
    let mut resource_version = None;
    let mut rx = spawn_page(lister_watcher, full, compact);
    match read_page(&mut rx, true, sink, |meta| {
        resource_version = Some(list_resource_version(meta)?);
        Ok(())
    })
    .await
    {
        Page::Done => {}
        Page::Failed(error) => return Err(error),
        Page::Lost => return Err(lost()),
    }
    Ok(ListSummary {
        resource_version: resource_version.ok_or(Error::MissingResourceVersion)?,
        paginated: true,
        pages: pages + 1,
    })
}

/// Reads one page from its task: calls `on_meta` with its metadata (once; with empty metadata
/// if the page had none) and hands its items to `sink`. Items that arrive before the metadata
/// of the list's first page are held until `on_meta` accepted it.
async fn read_page<K>(
    rx: &mut mpsc::Receiver<PageMessage<K>>,
    first_page: bool,
    sink: &mut (dyn PageSink<K> + Send),
    mut on_meta: impl FnMut(&ListMeta) -> Result<(), Error>,
) -> Page {
    let mut meta: Option<ListMeta> = None;
    let mut held: Vec<Vec<K>> = Vec::new();
    loop {
        let part = match rx.recv().await {
            None => return Page::Lost,
            Some(None) => break,
            Some(Some(Err(error))) => return Page::Failed(error),
            Some(Some(Ok(part))) => part,
        };
        let result = match part {
            ListPart::Meta(list_meta) if meta.is_none() => {
                let accepted = on_meta(&list_meta);
                meta = Some(list_meta);
                accepted.and_then(|()| held.drain(..).try_for_each(|items| sink.page(items)))
            }
            // A second metadata object is not valid JSON for a list; the first one counts.
            ListPart::Meta(_) => Ok(()),
            ListPart::Items(items) if meta.is_none() && first_page => {
                held.push(items);
                Ok(())
            }
            ListPart::Items(items) => sink.page(items),
            // The list's type is the lister-watcher's to check.
            ListPart::ApiVersion(_) | ListPart::Kind(_) => Ok(()),
        };
        if let Err(error) = result {
            return Page::Failed(error);
        }
    }
    if meta.is_none()
        && let Err(error) = on_meta(&ListMeta::default())
            .and_then(|()| held.drain(..).try_for_each(|items| sink.page(items)))
    {
        return Page::Failed(error);
    }
    Page::Done
}

/// The error of a page whose task went away without finishing it.
fn lost() -> Error {
    Error::Request {
        verb: "list",
        source: kube::Error::ReadEvents(std::io::Error::other(
            "the list request's task ended before its response did",
        )),
    }
}

/// The resource version of a list response; a watch cannot start without one.
fn list_resource_version(meta: &ListMeta) -> Result<String, Error> {
    meta.resource_version
        .clone()
        .filter(|rv| !rv.is_empty())
        .ok_or(Error::MissingResourceVersion)
}
