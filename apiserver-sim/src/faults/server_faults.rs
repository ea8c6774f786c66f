//! [`ServerFaults`]: the faults that act on the whole server (every watch, every
//! connection, all history) rather than on one request.
//!
//! The shared state implements them; the public handle, the `/__sim` endpoints and the
//! chaos timeline inject them through this trait.

use std::time::Duration;

/// Faults that act on the whole server.
pub(crate) trait ServerFaults {
    /// Ends every open watch (clients re-watch from their last RV).
    fn drop_watches(&self);

    /// Compacts every resource's history up to the current RV; returns that RV.
    fn compact(&self) -> u64;

    /// The "restart" fault: cuts every open connection (in-flight requests and watches end
    /// abruptly, state is kept) and closes new connections as soon as they are accepted for
    /// `downtime`.
    fn restart(&self, downtime: Duration);

    /// Makes every open watch that allows bookmarks send a BOOKMARK with the current RV now.
    fn send_bookmarks(&self);
}
