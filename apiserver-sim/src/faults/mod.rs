//! Fault injection, in two parts:
//!
//! - [`fail_rules`]: "fail the next N requests matching verb and resource", and random
//!   failures with a given probability from a seeded sequence, installed by tests or over
//!   `/__sim/faults`;
//! - [`chaos`]: chaos mode, a seeded schedule of server-wide faults over time plus
//!   per-request faults, at the rates of a named profile.
//!
//! - [`server_faults`]: the faults that act on the whole server (drop every watch, compact
//!   history, restart, send bookmarks), implemented by the shared state
//!   ([`crate::shared::Shared`]) and called by the public handle, the `/__sim` endpoints
//!   and the chaos timeline.

pub(crate) mod chaos;
pub(crate) mod fail_rules;
pub(crate) mod server_faults;
