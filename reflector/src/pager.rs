//! Paginated lists (client-go's `tools/pager`): follow continue tokens, keep the first page's
//! resource version, and fall back to one full list when a continue token expires. Each page
//! goes to a [`PageSink`] as soon as it arrives, so no list is ever held whole here.

use kube::api::{ListParams, ObjectList};

use crate::{Error, ListerWatcher};

/// Where the pages of a list go, in order.
pub(crate) trait PageSink<K> {
    /// One page of the list.
    fn page(&mut self, items: Vec<K>) -> Result<(), Error>;

    /// The list starts over: a continue token expired, and one full list follows. Forget the
    /// pages received so far (they came from an older snapshot).
    fn restart(&mut self);
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

/// Lists everything at `resource_version` ("" = latest) in pages of `page_size` (0 = one
/// request without a limit), handing each page to `sink`. Fails with
/// [`Error::MissingResourceVersion`] before any page reaches `sink` when the server sends no
/// resource version.
pub(crate) async fn list<K: Clone>(
    lister_watcher: &dyn ListerWatcher<K>,
    resource_version: &str,
    page_size: u32,
    sink: &mut (dyn PageSink<K> + Send),
) -> Result<ListSummary, Error> {
    let first = ListParams {
        resource_version: Some(resource_version.to_string()).filter(|rv| !rv.is_empty()),
        limit: Some(page_size).filter(|&n| n > 0),
        ..ListParams::default()
    };
    let mut params = first.clone();
    let mut summary: Option<ListSummary> = None;
    loop {
        let page = match lister_watcher.list(&params).await {
            Ok(page) => page,
            Err(error) if error.is_expired() && params.continue_token.is_some() => {
                // The snapshot behind the continue token was compacted away: one full,
                // unpaginated list at the original resource version replaces what we have.
                let pages = summary.as_ref().map_or(0, |s| s.pages);
                tracing::info!(%error, pages, "continue token expired; listing without pagination");
                sink.restart();
                let full = ListParams {
                    limit: None,
                    ..first
                };
                let list = lister_watcher.list(&full).await?;
                let resource_version = list_resource_version(&list)?;
                sink.page(list.items)?;
                return Ok(ListSummary {
                    resource_version,
                    paginated: true,
                    pages: pages + 1,
                });
            }
            Err(error) => return Err(error),
        };
        let summary = match &mut summary {
            Some(summary) => summary,
            None => summary.insert(ListSummary {
                resource_version: list_resource_version(&page)?,
                paginated: false,
                pages: 0,
            }),
        };
        summary.pages += 1;
        let continue_token = page.metadata.continue_.filter(|token| !token.is_empty());
        sink.page(page.items)?;
        match continue_token {
            Some(token) => {
                // The server rejects a resource version together with a continue token.
                params.continue_token = Some(token);
                params.resource_version = None;
                params.version_match = None;
                summary.paginated = true;
            }
            None => {
                return Ok(ListSummary {
                    resource_version: std::mem::take(&mut summary.resource_version),
                    ..*summary
                });
            }
        }
    }
}

/// The resource version of a list response; a watch cannot start without one.
fn list_resource_version<K: Clone>(list: &ObjectList<K>) -> Result<String, Error> {
    list.metadata
        .resource_version
        .clone()
        .filter(|rv| !rv.is_empty())
        .ok_or(Error::MissingResourceVersion)
}
