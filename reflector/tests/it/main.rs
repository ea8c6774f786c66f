//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../common/mod.rs"]
mod common;

mod backoff;
mod backpressure;
mod events;
mod list_watch;
mod list_watch_rules;
mod metadata;
mod paged_list;
mod randomized;
mod streaming_list;
mod watch_decoder;
