//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../common/mod.rs"]
mod common;

mod chaos;
mod factory;
mod late_handler;
mod metadata;
mod lifecycle;
mod panics;
mod resync;
mod slow_handler;
mod tombstones;
