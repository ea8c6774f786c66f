//! The crate's integration tests, linked into one test binary: each module is one area.

mod compact_codec;
mod compact_kinds;
mod compact_round_trip;
mod concurrency;
mod key_parse;
mod model;
mod stored_values;
