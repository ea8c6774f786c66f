//! Decoding watch and list response bodies, layer by layer, with no I/O of its own, into the
//! streams a [`ListerWatcher`](crate::ListerWatcher) hands the reflector ([`WatchStream`],
//! [`ListStream`]):
//!
//! - [`event`]: one JSON line into a [`WatchEvent`](kube::api::WatchEvent), the object decoded
//!   straight from the line's bytes;
//! - [`line`]: a body cut into chunks anywhere, split into lines, each decoded as an event;
//!   bounded memory whatever the server sends;
//! - [`body`]: an `AsyncBufRead` HTTP body as a stream of events, for [`ListerWatcher`](crate::ListerWatcher)s,
//!   decoded as the stream is polled or as [`WatchDecoding`] says;
//! - [`pipelined`]: the same on several threads (a reader task and decoding tasks), in order;
//! - [`list`] and [`list_body`]: a list response body into its metadata and items as it streams
//!   in, and the same over an `AsyncBufRead`;
//!
//! The files depend on each other in that order only: `body` → `pipelined` → `line` → `event`,
//! and `list_body` → `list`; outside this folder, on the crate's errors alone.

mod body;
mod event;
mod line;
mod list;
mod list_body;
mod pipelined;

use futures::stream::BoxStream;
use kube::api::WatchEvent;

use crate::Error;

pub use body::{WatchDecoding, decode_watch_body};
pub use event::decode_watch_event;
pub use line::{DEFAULT_MAX_WATCH_LINE_LEN, DecodeChunk, DecodedLine, WatchLineDecoder};
pub use list::{ListBodyDecoder, ListPart};
pub use list_body::decode_list_body;

/// The stream of events a watch returns.
pub type WatchStream<K> = BoxStream<'static, Result<WatchEvent<K>, Error>>;

/// The parts of one list response as it arrives: its metadata, then its items in batches (see
/// [`ListPart`]); an error ends it.
pub type ListStream<K> = BoxStream<'static, Result<ListPart<K>, Error>>;
