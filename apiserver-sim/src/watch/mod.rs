//! Watch streams: initial events, resume from history, selector transitions, bookmarks,
//! timeouts, and the in-band ERROR event for a too-old resourceVersion.
//!
//! - [`stream`]: one watch stream, from its start to its end;
//! - [`filter`]: what one watcher sees and how its events are encoded (in the wire format of
//!   `api/watch_line.rs`).

pub(crate) mod filter;
pub(crate) mod stream;
