//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../common/mod.rs"]
mod common;

mod admission;
mod apply;
mod apply_input;
mod apply_lists;
mod binary;
mod builtin_kinds;
mod chaos;
mod crd;
mod crud;
mod deletion;
mod events_api;
mod faults;
mod fuzz;
mod hooks;
mod kubectl;
mod kubectl_apply;
mod kubectl_auth;
mod kubectl_explain;
mod kubectl_playground;
mod kubectl_tables;
mod kubectl_workloads;
mod list_watch;
mod logging;
mod managed_fields;
mod managed_fields_kinds;
mod negotiation;
mod not_found;
mod owner_references;
mod pod_actions;
mod protobuf;
mod rbac;
mod robustness;
mod rules_review;
mod servers;
mod services;
mod smoke;
mod tables;
mod tables_cluster;
mod tables_custom;
mod tables_options;
mod watch_recovery;
mod workloads;
mod workloads_pods;
