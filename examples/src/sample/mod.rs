//! The sample-controller: a port of kubernetes/sample-controller on `controller-runtime`.
//!
//! For every `Foo` it keeps a Deployment named `spec.deploymentName`, owned by the Foo, with
//! the Foo's replicas, and mirrors the Deployment's available replicas into the Foo's status.

mod deployment;
mod operator;
mod rbac;
mod sync;
mod watch;

use std::time::Duration;

use controller_runtime::{ControllerHandle, Manager};
use k8s_openapi::api::apps::v1::Deployment;

pub use deployment::{new_deployment, nginx_deployment_spec};
pub use operator::{LEASE_NAME, Settings, manager_builder};
pub use rbac::{rbac_policy, rbac_yaml, reconciler_permissions};
pub use sync::{SampleController, SyncError, resource_exists_message};
pub use watch::{FooAddOrUpdate, controlling_foo, rate_limiter};

use crate::foo::Foo;
use crate::recorder::Recorder;

/// Agent name: the events' source component and the field manager of every write.
pub const AGENT_NAME: &str = "sample-controller";
/// Reason of the event emitted when a Foo is synced.
pub const REASON_SUCCESS_SYNCED: &str = "Synced";
/// Reason of the event emitted when the Deployment exists but another object controls it.
pub const REASON_ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Message of the event emitted when a Foo is synced.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";
/// Reconciles running at once.
pub const WORKERS: usize = 2;
/// How often every cached Foo and Deployment is replayed (the Go informers' resync).
pub const RESYNC_PERIOD: Duration = Duration::from_secs(30);

/// Why the controller could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The rate limiter's settings were refused.
    #[error("rate limiter: {0}")]
    RateLimiter(#[from] workqueue::Error),
    /// The manager refused the controller (or its roles could not be written).
    #[error("controller: {0}")]
    Controller(#[from] controller_runtime::Error),
    /// The placeholder client of the `rbac` subcommand could not be built.
    #[error("client: {0}")]
    Client(#[source] kube::Error),
}

/// Registers the sample-controller with `manager` (build the manager with
/// [`manager_builder`], or at least with [`RESYNC_PERIOD`] as its resync period, to match the
/// Go controller), declaring its writes for the manager's generated RBAC roles.
pub fn register(manager: &Manager) -> Result<ControllerHandle, SetupError> {
    let foos = manager.informer::<Foo>().lister();
    let recorder = Recorder::new(manager.client().clone(), AGENT_NAME);
    let reconciler = SampleController::new(manager.client().clone(), recorder);
    let handle = controller_runtime::Controller::new(manager)
        .for_with::<Foo>(FooAddOrUpdate)
        .named(AGENT_NAME)
        .watches_with(
            move |deployment: &Deployment| controlling_foo(&foos, deployment),
            watch::deployment_predicate(),
        )
        .max_concurrent_reconciles(WORKERS)
        // Events go out as core/v1 Events through the Go-style recorder, declared below.
        .event_recorder(false)
        .permissions(reconciler_permissions())
        .rate_limiter(rate_limiter()?)
        .build(reconciler)?;
    Ok(handle)
}
