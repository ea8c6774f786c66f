//! [`Runnable`]: anything the manager runs alongside its controllers once the caches synced
//! (controllers themselves are runnables, and so is each controller's event recorder). Defined
//! here, below every module that implements it, and re-exported as `manager::Runnable`.

use std::error::Error as StdError;

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

/// A long-running task owned by a [`Manager`](crate::manager::Manager).
///
/// `run` is called once, after every informer of the manager synced; it should return when
/// `shutdown` is cancelled (after finishing in-flight work). Returning an error early stops the
/// whole manager, which reports the error from `start`.
///
/// Implement it with [`#[async_trait]`](crate::manager::async_trait): the manager keeps its runnables as
/// `Box<dyn Runnable>`, and a trait object needs boxed futures. ([`Reconciler`](crate::controller::Reconciler),
/// which a controller holds by type, is a native async trait instead.)
#[async_trait]
pub trait Runnable: Send + 'static {
    /// The name used in logs and errors.
    fn name(&self) -> &str;

    /// Whether this runnable may run only while the manager leads (controller-runtime's
    /// `NeedLeaderElection`; default: yes). Matters only when the manager elects a leader:
    /// such runnables start once leadership is acquired and are aborted at once when it is
    /// lost. Others start once the caches synced, leader or not.
    fn need_leader_election(&self) -> bool {
        true
    }

    /// The RBAC rules this runnable needs (default: none); the manager adds them to its
    /// [`rbac_policy`](crate::manager::Manager::rbac_policy) when the runnable is added.
    fn permissions(&self) -> Vec<crate::rbac::Rule> {
        Vec::new()
    }

    /// Whether this runnable warms up before its manager leads (controller-runtime's
    /// `WarmupRunnable`; default: no). Matters only for a runnable that
    /// [needs leadership](Self::need_leader_election) in a manager that elects: the manager calls
    /// [`warm_up`](Self::warm_up) as soon as it starts, leader or not, and [`run`](Self::run)
    /// once it leads. Controllers answer what
    /// [`ControllerBuilder::warm_up`](crate::controller::ControllerBuilder::warm_up) (or the
    /// manager's default) says.
    fn warms_up(&self) -> bool {
        false
    }

    /// Starts what the runnable can do before its manager leads — for a controller: the
    /// informers of the kinds it watches, its sources, its queue filling — without acting on the
    /// cluster, and returns at once (what it starts runs until `shutdown`, or is taken over by
    /// [`run`](Self::run)). Called at most once, before `run`, when [`warms_up`](Self::warms_up)
    /// says so. The default does nothing.
    fn warm_up(&self, shutdown: &CancellationToken) {
        let _ = shutdown;
    }

    /// Runs until `shutdown` is cancelled.
    async fn run(
        self: Box<Self>,
        shutdown: CancellationToken,
    ) -> Result<(), Box<dyn StdError + Send + Sync>>;
}
