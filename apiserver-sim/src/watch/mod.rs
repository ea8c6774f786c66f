//! Watch streams: initial events, resume from history, selector transitions, bookmarks,
//! timeouts, and the in-band ERROR event for a too-old resourceVersion.
//!
//! - [`stream`]: one watch stream, from its start to its end;
//! - [`filter`]: what one watcher sees and how its events are encoded;
//! - [`line`](mod@line): the watch wire format (event lines, ERROR lines, the initial-events-end
//!   annotation).

pub(crate) mod filter;
pub(crate) mod line;
pub(crate) mod stream;
