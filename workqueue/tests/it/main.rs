//! The crate's integration tests, linked into one test binary: each module is one area.

mod delaying;
mod delaying_model;
mod interface;
mod model;
mod priority;
mod priority_metrics;
mod priority_model;
mod queue;
mod stress;
mod support;
