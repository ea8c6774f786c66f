//! The crate's integration tests, linked into one test binary: each module is one area.

// The crate under the name its shared test helpers use (`informer::…`).
extern crate informer as informer;

#[path = "../common/mod.rs"]
mod common;

mod cache_version;
mod chaos;
mod factory;
mod factory_fifo;
mod late_handler;
mod lifecycle;
mod metadata;
mod panics;
mod pop_batch;
mod resync;
mod slow_consumer;
mod slow_handler;
mod tombstones;
