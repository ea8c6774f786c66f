//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../common/mod.rs"]
mod common;

/// The `sample-controller` binary's source, for the tests of its parts.
#[path = "../../src/bin/sample-controller/main.rs"]
#[allow(dead_code)]
mod sample_controller;

mod config_reloader;
mod configmap_mirror;
mod end_to_end;
mod foo_webhooks;
mod kubectl;
mod least_privilege;
mod manifests;
mod manifests_dry_run;
mod missing_crd;
mod operations_flags;
mod pod_index;
mod sample_controller_binary;
mod sample_handlers;
mod sharded;
mod sync_handler;
mod workqueue_only;
