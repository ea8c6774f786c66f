//! The crate's integration tests, linked into one test binary: each module is one area.

mod concurrency;
mod key_parse;
mod model;
