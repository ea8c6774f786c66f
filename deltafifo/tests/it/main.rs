//! The crate's integration tests, linked into one test binary: each module is one area. Every
//! suite runs twice, on typed objects (`typed::…`) and on compact ones (`compact::…`): the
//! fifos behave the same whatever the objects they queue.

// Loading each suite once per mode is the point: the same source, compiled over two types.
#![allow(clippy::duplicate_mod)]

#[path = "../support/fixture.rs"]
mod fixture;

/// Declares the suites in a module whose `Obj` is the object type they run on (the module's
/// `#[path = "."]` keeps the files where they are).
macro_rules! suites {
    () => {
        #[path = "../support/mod.rs"]
        mod support;

        #[path = "backlog.rs"]
        mod backlog;
        #[path = "delta_batches.rs"]
        mod delta_batches;
        #[path = "in_order.rs"]
        mod in_order;
        #[path = "model.rs"]
        mod model;
        #[path = "paged_replace.rs"]
        mod paged_replace;
        #[path = "real_fifo/mod.rs"]
        mod real_fifo;
        #[path = "relist_history.rs"]
        mod relist_history;
        #[path = "rules.rs"]
        mod rules;
    };
}

/// The suites on typed objects.
#[path = "."]
mod typed {
    /// The object type of this mode.
    pub type Obj = k8s_openapi::api::core::v1::ConfigMap;
    suites!();
}

/// The suites on compact objects.
#[path = "."]
mod compact {
    /// The object type of this mode.
    pub type Obj = indexer::compact::Compact<k8s_openapi::api::core::v1::ConfigMap>;
    suites!();
}
