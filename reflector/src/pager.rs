//! Paginated lists (client-go's `tools/pager`): follow continue tokens, keep the first page's
//! resource version, and fall back to one full list when a continue token expires.

use kube::api::ListParams;

use crate::{Error, ListerWatcher};

/// The accumulated result of a (possibly paginated) list.
pub(crate) struct ListResult<K> {
    pub(crate) items: Vec<K>,
    /// The first page's resource version: every page comes from its snapshot.
    pub(crate) resource_version: Option<String>,
    /// More than one page was needed.
    pub(crate) paginated: bool,
    /// Requests made.
    pub(crate) pages: usize,
}

/// Lists everything at `resource_version` ("" = latest) in pages of `page_size` (0 = one
/// request without a limit).
pub(crate) async fn list<K: Clone>(
    lister_watcher: &dyn ListerWatcher<K>,
    resource_version: &str,
    page_size: u32,
) -> Result<ListResult<K>, Error> {
    let first = ListParams {
        resource_version: Some(resource_version.to_string()).filter(|rv| !rv.is_empty()),
        limit: Some(page_size).filter(|&n| n > 0),
        ..ListParams::default()
    };
    let mut params = first.clone();
    let mut result = ListResult {
        items: Vec::new(),
        resource_version: None,
        paginated: false,
        pages: 0,
    };
    loop {
        let page = match lister_watcher.list(&params).await {
            Ok(page) => page,
            Err(error) if error.is_expired() && params.continue_token.is_some() => {
                // The snapshot behind the continue token was compacted away: one full,
                // unpaginated list at the original resource version replaces what we have.
                tracing::info!(%error, pages = result.pages, "continue token expired; listing without pagination");
                let full = ListParams {
                    limit: None,
                    ..first
                };
                let list = lister_watcher.list(&full).await?;
                result.items = list.items;
                result.resource_version = list.metadata.resource_version;
                result.pages += 1;
                return Ok(result);
            }
            Err(error) => return Err(error),
        };
        result.pages += 1;
        if result.resource_version.is_none() {
            result.resource_version = page.metadata.resource_version;
        }
        if result.items.is_empty() {
            result.items = page.items;
        } else {
            result.items.extend(page.items);
        }
        match page.metadata.continue_.filter(|token| !token.is_empty()) {
            Some(token) => {
                // The server rejects a resource version together with a continue token.
                params.continue_token = Some(token);
                params.resource_version = None;
                params.version_match = None;
                result.paginated = true;
            }
            None => return Ok(result),
        }
    }
}
