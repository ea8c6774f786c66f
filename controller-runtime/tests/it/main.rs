//! The crate's integration tests, linked into one test binary: each module is one area.

#[path = "../common/mod.rs"]
mod common;
#[path = "../workload/mod.rs"]
mod workload;

mod apply;
mod backoff;
mod cache_settings;
mod compact;
mod concurrency;
mod content_predicates;
mod context_writes;
mod debounce;
mod deleted_and_ryow;
mod dynamic;
mod field_index;
mod fifos;
mod finalizer;
mod finalizer_trap;
mod health;
mod invalid_settings;
mod late;
mod leader_election;
mod managed_fields;
mod metadata;
mod metrics;
mod namespaces;
mod owns;
mod priority;
mod rbac;
mod recorder;
mod sharding;
mod shutdown;
mod soak;
mod sources;
mod stale_owner;
mod staleness;
mod sync;
mod warm_replicas;
mod watch_matrix;
mod watches;
#[cfg(feature = "webhook")]
mod webhook;
