//! What a [`Manager`] needs from the API server, as RBAC rules: list and watch of every type it
//! caches, in full or metadata-only (recorded as informers are handed out), what its runnables declare (each
//! controller's event recorder: create and patch of `events.k8s.io` events), leader election
//! (create, and get and update of its own Lease), and what the operator declares for its
//! reconcilers' writes ([`Manager::require`], [`ControllerBuilder::permissions`]), which code
//! cannot reveal. The admission and conversion webhook server calls no API and needs nothing.
//!
//! [`ControllerBuilder::permissions`]: crate::ControllerBuilder::permissions

use k8s_openapi::api::coordination::v1::Lease;

use crate::error::Error;
use crate::kind::Kind;
use crate::manager::running::Manager;
use crate::ops::leader_election::LeaderElectionConfig;
use crate::rbac::{Permissions, RbacPolicy, Rule, Verb};

impl Manager {
    /// Declares that the operator needs `rule` (typically a reconciler's writes, which the
    /// manager cannot see): it becomes part of [`rbac_policy`](Self::rbac_policy). Fails if
    /// the rule has no verbs.
    pub fn require(&self, rule: Rule) -> Result<(), Error> {
        self.state.lock().permissions.add(rule)
    }

    /// Every rule the manager needs now, merged (one per resource, names and namespace).
    pub fn permissions(&self) -> Vec<Rule> {
        self.permission_set().rules()
    }

    /// The least-privilege roles named `name` for this manager, as configured so far (build
    /// every controller first): a `ClusterRole`, and for a manager restricted to a namespace
    /// the `Role` there that holds its namespaced rules (see [`Permissions::policy`]).
    pub fn rbac_policy(&self, name: &str) -> RbacPolicy {
        self.permission_set()
            .policy(name, self.shared.namespace.as_deref())
    }

    /// The recorded rules plus leader election's.
    fn permission_set(&self) -> Permissions {
        let mut set = self.state.lock().permissions.clone();
        if let Some(elector) = self.elector() {
            for rule in leader_election_rules(elector.config(), self.shared.namespace.is_some()) {
                // The rules have verbs: adding cannot fail.
                let _ = set.add(rule);
            }
        }
        set
    }

    /// Records that `K` is cached: list and watch (in the manager's namespace, if any).
    pub(crate) fn require_informer<K: Kind>(&self) {
        // The rule has verbs: adding cannot fail.
        let _ = self
            .state
            .lock()
            .permissions
            .add(Rule::of::<K>().verbs([Verb::List, Verb::Watch]));
    }

    /// Records what a runnable declares it needs.
    pub(crate) fn require_all(&self, rules: Vec<Rule>) -> Result<(), Error> {
        let mut state = self.state.lock();
        for rule in rules {
            state.permissions.add(rule)?;
        }
        Ok(())
    }
}

/// Leader election's rules: create a Lease (a create names no object, so it cannot be
/// restricted to the lease), and get and update that one Lease. Pinned to the lease's
/// namespace for a manager restricted to a namespace (so they land in a Role there).
fn leader_election_rules(config: &LeaderElectionConfig, namespaced_manager: bool) -> [Rule; 2] {
    let pin = |rule: Rule| {
        if namespaced_manager {
            rule.in_namespace(config.lease_namespace())
        } else {
            rule
        }
    };
    [
        pin(Rule::of::<Lease>().verbs([Verb::Create])),
        pin(Rule::of::<Lease>()
            .named([config.lease_name()])
            .verbs([Verb::Get, Verb::Update])),
    ]
}
