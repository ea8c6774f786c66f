//! [`Host`]: what a controller needs from the manager it runs in — the client, the cache, the
//! metrics, leader election, sharding, and a place to register itself — as a trait the manager
//! implements, so that this module never depends on the manager.

use std::time::Duration;

use kube::Client;

use crate::cache::{Cache, KindKey};
use crate::controller::error::Error;
use crate::controller::shard::ShardHost;
use crate::ops::leader_election::LeaderElector;
use crate::ops::metrics::Metrics;
use crate::ops::runnable::Runnable;
use crate::rbac::Rule;

/// The manager as a controller sees it.
pub(crate) trait Host {
    /// The client every controller shares.
    fn client(&self) -> &Client;
    /// The manager's cache.
    fn cache(&self) -> Cache;
    /// The manager's metrics registry.
    fn metrics(&self) -> &Metrics;
    /// How long a controller waits for its event handlers to sync.
    fn cache_sync_timeout(&self) -> Duration;
    /// The leader elector, when the manager elects (or holds a shard Lease).
    fn elector(&self) -> Option<&LeaderElector>;
    /// Whether controllers warm up before leadership unless built otherwise.
    fn warm_up_default(&self) -> bool;
    /// Whether the manager has been started.
    fn is_started(&self) -> bool;
    /// The sharded manager's part, when sharded.
    fn sharding(&self) -> Option<&dyn ShardHost>;
    /// Reserves a controller name; fails if it is taken or the manager has stopped.
    fn reserve_name(&self, name: &str) -> Result<(), Error>;
    /// Frees a name reserved by a controller whose build failed.
    fn release_name(&self, name: &str);
    /// Records the RBAC rules a controller declares.
    fn require_all(&self, rules: Vec<Rule>) -> Result<(), Error>;
    /// Adds a built controller's runnables, removable together with `teardown`.
    fn add_controller(
        &self,
        name: &str,
        runnables: Vec<Box<dyn Runnable>>,
        teardown: Teardown,
    ) -> Result<(), Error>;
}

/// What removing a controller undoes: its event handlers, and its use of each kind's cache.
#[derive(Default)]
pub(crate) struct Teardown {
    /// Removes one event handler from its informer.
    pub(crate) handlers: Vec<Box<dyn FnOnce() + Send>>,
    /// The kinds the controller watches (released on removal).
    pub(crate) kinds: Vec<KindKey>,
}
