//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../common/mod.rs"]
mod common;

mod binary;
mod builtin_kinds;
mod chaos;
mod crd;
mod crud;
mod events_api;
mod faults;
mod fuzz;
mod hooks;
mod kubectl;
mod kubectl_playground;
mod list_watch;
mod logging;
mod protobuf;
mod robustness;
mod smoke;
mod workloads;
