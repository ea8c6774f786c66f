//! Least-privilege RBAC for an operator, generated from what its
//! [`Manager`](crate::manager::Manager)
//! runs instead of written by hand: [`Rule`] (verbs on a resource or subresource, optionally
//! named objects or one namespace), [`Permissions`] (a merged set of rules), and
//! [`RbacPolicy`] (the `ClusterRole` and `Role`s that grant exactly them, as k8s-openapi
//! objects or YAML).
//!
//! The manager records what it can see — list and watch per cached type, its controllers'
//! event recorders (`events.k8s.io` events: create, patch), leader election (Leases: create;
//! get and update of its own) — and the operator declares its reconcilers' writes with
//! [`ControllerBuilder::permissions`](crate::controller::ControllerBuilder::permissions) or
//! [`Manager::require`](crate::manager::Manager::require).
//! [`Manager::rbac_policy`](crate::manager::Manager::rbac_policy) then gives the roles.
//!
//! ```
//! use controller_runtime::rbac::{Permissions, Rule, Verb};
//! use k8s_openapi::api::apps::v1::Deployment;
//!
//! let mut needs = Permissions::default();
//! needs.add(Rule::of::<Deployment>().verbs([Verb::List, Verb::Watch]))?;
//! needs.add(Rule::of::<Deployment>().verbs([Verb::Create]))?;
//! needs.add(Rule::of::<Deployment>().subresource("scale").verbs([Verb::Update]))?;
//! let policy = needs.policy("my-operator", None);
//! let rules = policy.cluster_role.unwrap().rules.unwrap();
//! assert_eq!(rules[0].verbs, ["list", "watch", "create"]);
//! assert_eq!(rules[1].resources.as_deref(), Some(&["deployments/scale".to_owned()][..]));
//! # Ok::<(), controller_runtime::rbac::Error>(())
//! ```

//!
//! # Errors
//!
//! [`Error`]: a rule without verbs, or roles that cannot be written as YAML.

mod error;
mod policy;
mod rule;

pub use error::Error;
pub use policy::{Permissions, RbacPolicy};
pub use rule::{Rule, Verb};
