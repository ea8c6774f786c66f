//! The paged list into the store (client-go's `list`): the page size rules, the pages handed
//! to the store's replace as they arrive, and the replace finished at the list's resource
//! version. Which resource version to list at, and what to do when a list fails, are the run
//! loop's decisions: nothing here retries (the pager's one full list after an expired continue
//! token aside).

use std::sync::Arc;

use indexer::{Backpressure, ObjectKeyRef, ReplaceInPages};
use tokio::time::Instant;

use super::shared::Shared;
use crate::options::DEFAULT_PAGE_SIZE;
use crate::pager::{self, ListSummary, PageSink};
use crate::{Error, Object};

/// A list whose pages are all in the store's pending replace; [`commit`](Listed::commit)
/// finishes it. Dropped instead, it abandons the replace: the store deletes nothing because of
/// it.
pub(super) struct Listed<'a, K> {
    pages: StorePages<'a, K>,
    summary: ListSummary,
    requested: String,
    started: Instant,
}

/// Lists at `resource_version` ("" = latest, "0" = any) in pages, each handed to the store's
/// replace as it arrives. `paginated_result` is client-go's memory of a server without a watch
/// cache: set here when an RV "0" list came back in pages, it keeps later lists paged.
pub(super) async fn fetch<'a, K: Object>(
    shared: &'a Shared<K>,
    resource_version: &str,
    paginated_result: &mut bool,
) -> Result<Listed<'a, K>, Error> {
    let started = Instant::now();
    let page_size = match shared.options.page_size {
        Some(forced) => forced,
        None if *paginated_result => DEFAULT_PAGE_SIZE,
        // "Not older than" a known RV is served from the watch cache without pages; an
        // exact-RV paged read would hit the server's storage instead.
        None if !resource_version.is_empty() && resource_version != "0" => 0,
        None => DEFAULT_PAGE_SIZE,
    };
    let mut pages = StorePages {
        shared,
        replace: shared.store.replace_in_pages(),
        count: 0,
    };
    let summary = pager::list(
        &shared.lister_watcher,
        resource_version,
        page_size,
        shared.options.compact_objects,
        &mut pages,
    )
    .await?;
    if resource_version == "0" && summary.paginated {
        *paginated_result = true;
    }
    Ok(Listed {
        pages,
        summary,
        requested: resource_version.to_owned(),
        started,
    })
}

impl<K> Listed<'_, K> {
    /// Finishes the store's replace at the list's resource version, which becomes the last
    /// synced one.
    pub(super) fn commit(self) -> Result<(), Error> {
        let Listed {
            pages,
            summary,
            requested,
            started,
        } = self;
        let StorePages {
            shared,
            replace,
            count,
        } = pages;
        replace
            .finish(summary.resource_version.clone())
            .map_err(|source| Error::Store {
                operation: "replace",
                source,
            })?;
        tracing::debug!(
            count,
            pages = summary.pages,
            resource_version = %summary.resource_version,
            requested,
            duration = ?started.elapsed(),
            "listed"
        );
        shared.set_last_sync_resource_version(summary.resource_version);
        Ok(())
    }
}

/// The pages of a list on their way into the store: objects without a usable key are reported
/// and left out, the rest wrapped in their `Arc` once and handed to the store's replace as each
/// page arrives. Dropped without `finish` (the list failed), it abandons the replace.
struct StorePages<'a, K> {
    shared: &'a Shared<K>,
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
                Err(source) => self.shared.report(&Error::MissingMetadata {
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
        self.replace = self.shared.store.replace_in_pages();
        self.count = 0;
    }

    fn room(&self) -> Option<Backpressure<'_>> {
        self.shared.store.backpressure()
    }
}
