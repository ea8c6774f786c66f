//! [`Permissions`]: the rules an operator needs, merged (one rule per resource, names and
//! namespace, with the union of its verbs); and [`RbacPolicy`], the `ClusterRole` and `Role`s
//! that grant exactly them, as k8s-openapi objects or YAML.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use kube::api::ObjectMeta;

use crate::rbac::error::Error;
use crate::rbac::rule::{Rule, Verb};

/// What identifies a rule apart from its verbs.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Target {
    group: String,
    resource: String,
    names: BTreeSet<String>,
    namespaced: bool,
    namespace: Option<String>,
}

/// A set of [`Rule`]s: adding a rule on a target already present adds its verbs to it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Permissions {
    rules: BTreeMap<Target, BTreeSet<Verb>>,
}

impl Permissions {
    /// Adds `rule`; fails if it has no verbs (it would grant nothing: give it some with
    /// [`Rule::verbs`]).
    pub fn add(&mut self, rule: Rule) -> Result<(), Error> {
        if rule.verbs.is_empty() {
            return Err(Error::InvalidRule(format!(
                "the rule on {} has no verbs; add them with `.verbs([...])`",
                rule.resource
            )));
        }
        let target = Target {
            group: rule.group,
            resource: rule.resource,
            names: rule.names,
            namespaced: rule.namespaced,
            namespace: rule.namespace.filter(|_| rule.namespaced),
        };
        self.rules.entry(target).or_default().extend(rule.verbs);
        Ok(())
    }

    /// The merged rules, ordered by group, resource and names.
    pub fn rules(&self) -> Vec<Rule> {
        self.rules
            .iter()
            .map(|(t, verbs)| Rule {
                group: t.group.clone(),
                resource: t.resource.clone(),
                namespaced: t.namespaced,
                namespace: t.namespace.clone(),
                names: t.names.clone(),
                verbs: verbs.clone(),
            })
            .collect()
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The roles named `name` that grant these rules to an operator watching `namespace`
    /// (`None`: all namespaces). Rules pinned to a namespace ([`Rule::in_namespace`]) go to a
    /// `Role` there; other rules on namespaced resources go to a `Role` in `namespace` when
    /// there is one, else to the `ClusterRole`, which also holds every rule on
    /// cluster-scoped resources.
    pub fn policy(&self, name: &str, namespace: Option<&str>) -> RbacPolicy {
        let mut cluster: Vec<PolicyRule> = Vec::new();
        let mut roles: BTreeMap<String, Vec<PolicyRule>> = BTreeMap::new();
        for rule in self.rules() {
            let place = match (&rule.namespace, namespace) {
                _ if !rule.namespaced => None,
                (Some(pinned), _) => Some(pinned.clone()),
                (None, Some(ns)) => Some(ns.to_owned()),
                (None, None) => None,
            };
            let policy_rule = rule.to_policy_rule();
            match place {
                Some(ns) => roles.entry(ns).or_default().push(policy_rule),
                None => cluster.push(policy_rule),
            }
        }
        let meta = |ns: Option<&str>| ObjectMeta {
            name: Some(name.to_owned()),
            namespace: ns.map(str::to_owned),
            ..ObjectMeta::default()
        };
        RbacPolicy {
            cluster_role: (!cluster.is_empty()).then(|| ClusterRole {
                metadata: meta(None),
                rules: Some(cluster),
                aggregation_rule: None,
            }),
            roles: roles
                .into_iter()
                .map(|(ns, rules)| Role {
                    metadata: meta(Some(&ns)),
                    rules: Some(rules),
                })
                .collect(),
        }
    }
}

/// The roles that grant an operator what it needs, from
/// [`Manager::rbac_policy`](crate::manager::Manager::rbac_policy): a `ClusterRole` (unless nothing is
/// needed cluster-wide) and one `Role` per namespace with rules of its own. Bind them to the
/// operator's ServiceAccount with a `ClusterRoleBinding` and `RoleBinding`s of the same name.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RbacPolicy {
    /// The cluster-wide rules.
    pub cluster_role: Option<ClusterRole>,
    /// The rules of single namespaces, by namespace.
    pub roles: Vec<Role>,
}

impl RbacPolicy {
    /// The objects as one YAML stream (`---` between documents), ready for `kubectl apply -f -`.
    pub fn to_yaml(&self) -> Result<String, Error> {
        let mut docs = Vec::new();
        if let Some(role) = &self.cluster_role {
            docs.push(serde_yaml::to_string(role).map_err(Error::Yaml)?);
        }
        for role in &self.roles {
            docs.push(serde_yaml::to_string(role).map_err(Error::Yaml)?);
        }
        Ok(docs.join("---\n"))
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::Node;

    use super::*;

    #[test]
    fn rules_on_one_target_merge_their_verbs_and_others_stay_apart() {
        let mut p = Permissions::default();
        p.add(Rule::of::<Deployment>().verbs([Verb::Watch, Verb::List]))
            .unwrap();
        p.add(Rule::of::<Deployment>().verbs([Verb::Create, Verb::List]))
            .unwrap();
        p.add(
            Rule::of::<Deployment>()
                .subresource("scale")
                .verbs([Verb::Update]),
        )
        .unwrap();
        p.add(Rule::of::<Deployment>().named(["d"]).verbs([Verb::Delete]))
            .unwrap();
        let shown: Vec<String> = p.rules().iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                "apps/deployments: list,watch,create",
                "apps/deployments [d]: delete",
                "apps/deployments/scale: update",
            ]
        );
        assert!(matches!(
            p.add(Rule::of::<Node>()),
            Err(Error::InvalidRule(message)) if message.contains("nodes has no verbs")
        ));
    }

    #[test]
    fn placement_follows_scope_and_namespace() {
        let mut p = Permissions::default();
        p.add(Rule::of::<Deployment>().verbs([Verb::List])).unwrap();
        p.add(Rule::of::<Node>().verbs([Verb::Get])).unwrap();
        p.add(
            Rule::resource("coordination.k8s.io", "leases", true)
                .in_namespace("le")
                .verbs([Verb::Create]),
        )
        .unwrap();
        let everywhere = p.policy("op", None);
        let cluster = everywhere.cluster_role.clone().unwrap();
        assert_eq!(cluster.rules.unwrap().len(), 2, "deployments and nodes");
        assert_eq!(everywhere.roles.len(), 1);
        assert_eq!(
            everywhere.roles[0].metadata.namespace.as_deref(),
            Some("le")
        );
        let scoped = p.policy("op", Some("team"));
        let cluster_rules = scoped.cluster_role.clone().unwrap().rules.unwrap();
        assert_eq!(cluster_rules[0].resources, Some(vec!["nodes".to_owned()]));
        let namespaces: Vec<_> = scoped
            .roles
            .iter()
            .map(|r| r.metadata.namespace.clone().unwrap())
            .collect();
        assert_eq!(namespaces, ["le", "team"]);
        let yaml = scoped.to_yaml().unwrap();
        assert_eq!(yaml.matches("---\n").count(), 2, "{yaml}");
        assert!(
            yaml.starts_with("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\n"),
            "{yaml}"
        );
    }
}
