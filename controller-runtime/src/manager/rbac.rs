//! What a [`Manager`] needs from the API server, as RBAC rules: list and watch of every kind it
//! caches, in full or metadata-only, typed or dynamic, in each namespace it caches them in (read
//! from the manager's kind caches when asked, so a removed controller's kinds drop out), what
//! its runnables declare (each
//! controller's event recorder: create and patch of `events.k8s.io` events), leader election
//! (create, and get and update of its own Lease), sharding (a shard's own Lease as leader
//! election's; the ring's sharder's: the ring's Leases and the labels of the sharded kinds), and what the operator declares for its
//! reconcilers' writes ([`Manager::require`], [`ControllerBuilder::permissions`]), which code
//! cannot reveal. The admission and conversion webhook server calls no API and needs nothing.
//!
//! [`ControllerBuilder::permissions`]: crate::controller::ControllerBuilder::permissions

use k8s_openapi::api::coordination::v1::Lease;

use crate::manager::error::Error;
use crate::manager::running::Manager;
use crate::ops::leader_election::LeaderElectionConfig;
use crate::rbac::{Permissions, RbacPolicy, Rule, Verb};

impl Manager {
    /// Declares that the operator needs `rule` (typically a reconciler's writes, which the
    /// manager cannot see): it becomes part of [`rbac_policy`](Self::rbac_policy). Fails if
    /// the rule has no verbs.
    pub fn require(&self, rule: Rule) -> Result<(), Error> {
        Ok(self.state.lock().permissions.add(rule)?)
    }

    /// Every rule the manager needs now, merged (one per resource, names and namespace).
    pub fn permissions(&self) -> Vec<Rule> {
        self.permission_set().rules()
    }

    /// The least-privilege roles named `name` for this manager, as configured so far (build
    /// every controller first): a `ClusterRole`; for a manager restricted to namespaces
    /// ([`ManagerBuilder::default_namespaces`](crate::manager::ManagerBuilder::default_namespaces)) a
    /// `Role` in each of them holding its namespaced rules (see [`Permissions::policy`]); and
    /// with leader election, a `Role` in the Lease's namespace holding the Lease rules.
    pub fn rbac_policy(&self, name: &str) -> RbacPolicy {
        self.permission_set().policy(name, None)
    }

    /// The declared rules, the cached kinds' list and watch, and leader election's; with a
    /// namespace set, each namespaced rule not pinned already is pinned to every namespace.
    fn permission_set(&self) -> Permissions {
        let declared = self.state.lock().permissions.rules();
        let cached = self.registry.access_rules();
        let namespaces = self.registry.default_namespaces();
        let mut rules: Vec<Rule> = declared.into_iter().chain(cached).collect();
        if let Some(elector) = self.elector() {
            rules.extend(leader_election_rules(elector.config()));
        }
        if let Some(sharded) = self.sharded() {
            rules.extend(sharded.permissions());
        }
        let mut set = Permissions::default();
        for rule in rules {
            let pinned: Vec<Rule> = match &namespaces {
                Some(namespaces) if rule.is_namespaced() && rule.namespace().is_none() => {
                    namespaces
                        .iter()
                        .map(|namespace| rule.clone().in_namespace(namespace.clone()))
                        .collect()
                }
                _ => vec![rule],
            };
            for rule in pinned {
                // Every rule here has verbs (checked when declared): adding cannot fail.
                let _ = set.add(rule);
            }
        }
        set
    }

    /// Records what a runnable declares it needs.
    pub(crate) fn require_all(&self, rules: Vec<Rule>) -> Result<(), crate::rbac::Error> {
        let mut state = self.state.lock();
        for rule in rules {
            state.permissions.add(rule)?;
        }
        Ok(())
    }
}

/// Leader election's rules: create a Lease (a create names no object, so it cannot be
/// restricted to the lease), and get and update that one Lease — all pinned to the lease's
/// namespace, so they land in a Role there and the operator cannot touch Leases elsewhere.
fn leader_election_rules(config: &LeaderElectionConfig) -> [Rule; 2] {
    let namespace = config.lease_namespace();
    [
        Rule::of::<Lease>()
            .in_namespace(namespace)
            .verbs([Verb::Create]),
        Rule::of::<Lease>()
            .in_namespace(namespace)
            .named([config.lease_name()])
            .verbs([Verb::Get, Verb::Update]),
    ]
}
