//! The manager as its controllers see it: [`Host`] for [`Manager`], and [`Controller::new`],
//! which starts a controller's builder on a manager. The controller module knows the manager
//! only through [`Host`].

use std::time::Duration;

use kube::Client;

use crate::cache::Cache;
use crate::controller::{self, Controller, Host, ShardHost, Teardown};
use crate::manager::controllers::Refused;
use crate::manager::running::Manager;
use crate::ops::leader_election::LeaderElector;
use crate::ops::metrics::Metrics;
use crate::ops::runnable::Runnable;
use crate::rbac::Rule;

impl<'m> Controller<'m> {
    /// Starts building a controller that will run in `manager`.
    pub fn new(manager: &'m Manager) -> Self {
        Controller::on(manager)
    }
}

impl Host for Manager {
    fn client(&self) -> &Client {
        Manager::client(self)
    }

    fn cache(&self) -> Cache {
        Manager::cache(self)
    }

    fn metrics(&self) -> &Metrics {
        Manager::metrics(self)
    }

    fn cache_sync_timeout(&self) -> Duration {
        self.cache_sync_timeout
    }

    fn elector(&self) -> Option<&LeaderElector> {
        Manager::elector(self)
    }

    fn warm_up_default(&self) -> bool {
        self.warm_up
    }

    fn is_started(&self) -> bool {
        self.state.lock().started
    }

    fn sharding(&self) -> Option<&dyn ShardHost> {
        self.sharded
            .as_deref()
            .map(|sharded| sharded as &dyn ShardHost)
    }

    fn reserve_name(&self, name: &str) -> Result<(), controller::Error> {
        let mut state = self.state.lock();
        if state.stopped {
            return Err(controller::Error::ManagerStopped);
        }
        if !state.names.insert(name.to_owned()) {
            return Err(controller::Error::DuplicateName(name.to_owned()));
        }
        Ok(())
    }

    fn release_name(&self, name: &str) {
        self.state.lock().names.remove(name);
    }

    fn require_all(&self, rules: Vec<Rule>) -> Result<(), controller::Error> {
        Ok(Manager::require_all(self, rules)?)
    }

    fn add_controller(
        &self,
        name: &str,
        runnables: Vec<Box<dyn Runnable>>,
        teardown: Teardown,
    ) -> Result<(), controller::Error> {
        Manager::add_controller(self, name, runnables, teardown).map_err(|refused| match refused {
            Refused::Stopped => controller::Error::ManagerStopped,
            Refused::Rbac(error) => controller::Error::Rbac(error),
        })
    }
}
