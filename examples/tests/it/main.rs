//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../common/mod.rs"]
mod common;

mod config_reloader;
mod configmap_mirror;
mod end_to_end;
mod foo_webhooks;
mod kubectl;
mod least_privilege;
mod manifests;
mod operations_flags;
mod pod_index;
mod sample_controller_binary;
mod sync_handler;
mod workqueue_only;
