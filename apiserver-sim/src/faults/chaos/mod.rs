//! Chaos mode: a seeded schedule of faults over time.
//!
//! Two sources of faults, both drawn from generators seeded by [`ChaosConfig::seed`](config::ChaosConfig::seed):
//!
//! - a timeline ([`ChaosSchedule`](schedule::ChaosSchedule)) run by a task the server owns: watch drops,
//!   compactions, restarts that keep the data but cut every connection, and bookmark
//!   requests;
//! - per-request draws: a fraction of API requests fail with 500/503 or 429 (with
//!   `Retry-After`), are delayed, or have their response written a few bytes at a time; a
//!   fraction of bookmark-enabled watches send every bookmark late.
//!
//! The timeline is fully deterministic for a seed and profile; the per-request draws are a
//! deterministic sequence consumed in the order requests arrive. Every injected fault is
//! counted ([`ChaosStats`](stats::ChaosStats)).

pub(crate) mod config;
pub(crate) mod profile;
pub(crate) mod runner;
pub(crate) mod schedule;
pub(crate) mod state;
pub(crate) mod stats;
