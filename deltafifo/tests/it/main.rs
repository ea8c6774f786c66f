//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../support/mod.rs"]
mod support;

mod backlog;
mod delta_batches;
mod in_order;
mod model;
mod paged_replace;
mod real_fifo;
mod relist_history;
mod rules;
