//! Decoding watch response bodies, layer by layer, with no I/O of its own:
//!
//! - [`event`]: one JSON line into a [`WatchEvent`](kube::api::WatchEvent), the object decoded
//!   straight from the line's bytes;
//! - [`line`]: a body cut into chunks anywhere, split into lines, each decoded as an event;
//!   bounded memory whatever the server sends;
//! - [`body`]: an `AsyncBufRead` HTTP body as a stream of events, for [`ListerWatcher`](crate::ListerWatcher)s;
//! - [`error`]: why a line yielded no event, with an escaped excerpt of the line.
//!
//! The files depend on each other in that order only: `body` → `line` → `event` → `error`.

mod body;
mod error;
mod event;
mod line;

pub use body::decode_watch_body;
pub use error::WatchDecodeError;
pub use event::decode_watch_event;
pub use line::{DEFAULT_MAX_WATCH_LINE_LEN, DecodeChunk, DecodedLine, WatchLineDecoder};
