//! Decoding watch response bodies, layer by layer, with no I/O of its own:
//!
//! - [`event`]: one JSON line into a [`WatchEvent`](kube::api::WatchEvent), the object decoded
//!   straight from the line's bytes;
//! - [`line`]: a body cut into chunks anywhere, split into lines, each decoded as an event;
//!   bounded memory whatever the server sends;
//! - [`body`]: an `AsyncBufRead` HTTP body as a stream of events, for [`ListerWatcher`](crate::ListerWatcher)s;
//! - [`pipelined`]: the same on several threads (a reader task and decoding tasks), in order;
//! - [`list`] and [`list_body`]: a list response body into its metadata and items as it streams
//!   in, and the same over an `AsyncBufRead`;
//! - [`error`]: why a line yielded no event, with an escaped excerpt of the line.
//!
//! The files depend on each other in that order only: `body` → `pipelined` → `line` → `event` →
//! `error`, and `list_body` → `list`.

mod body;
mod error;
mod event;
mod line;
mod list;
mod list_body;
mod pipelined;

pub use body::decode_watch_body;
pub use error::WatchDecodeError;
pub use event::decode_watch_event;
pub use line::{DEFAULT_MAX_WATCH_LINE_LEN, DecodeChunk, DecodedLine, WatchLineDecoder};
pub use list::{ListBodyDecoder, ListPart};
pub use list_body::decode_list_body;
