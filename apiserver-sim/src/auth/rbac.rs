//! The RBAC authorizer: which bindings apply to a user, which rules their roles grant
//! (aggregated ClusterRoles included), and the decision for one request — read from the
//! stored `rbac.authorization.k8s.io/v1` objects on every request, like kube-apiserver's
//! authorizer reads its informers.

use std::collections::HashSet;
use std::sync::Arc;

use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use serde_json::Value;

use super::attributes::Attributes;
use super::identity::{Identity, service_account_user};
use super::rules::allows;
use crate::machinery::resource_info::GroupResourceRef;
use crate::machinery::selector::selector_matches;
use crate::store::State;

/// The RBAC API group.
pub(crate) const GROUP: &str = "rbac.authorization.k8s.io";

/// The authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    /// Whether a rule allows the request.
    pub allowed: bool,
    /// Why bindings could not be evaluated (`RBAC: role.rbac.authorization.k8s.io "x" not
    /// found`), or empty.
    pub reason: String,
}

/// Decides whether `who` may do `attrs`: members of `system:masters` always may; others need
/// a rule of a role bound to them, cluster-wide by a ClusterRoleBinding or, for a request in
/// a namespace, by a RoleBinding there.
pub(crate) fn authorize(st: &State, who: &Identity, attrs: &Attributes) -> Decision {
    if who.is_superuser() {
        return Decision {
            allowed: true,
            reason: String::new(),
        };
    }
    let mut errors: Vec<String> = Vec::new();
    let mut allowed_by: Option<String> = None;
    visit_rules(
        st,
        who,
        attrs.resource.as_ref().and_then(|r| r.namespace.as_deref()),
        |source, rules| {
            match rules {
                Ok(rules) if rules.iter().any(|rule| allows(rule, attrs)) => {
                    allowed_by = Some(source.to_string());
                }
                Ok(_) => {}
                Err(e) => {
                    if !errors.contains(&e) {
                        errors.push(e);
                    }
                }
            }
            allowed_by.is_some()
        },
    );
    let reason = match (&allowed_by, errors.as_slice()) {
        (Some(source), _) => format!("RBAC: allowed by {source}"),
        (None, []) => String::new(),
        (None, [one]) => format!("RBAC: {one}"),
        (None, many) => format!("RBAC: [{}]", many.join(", ")),
    };
    Decision {
        allowed: allowed_by.is_some(),
        reason,
    }
}

/// A binding that gives `who` a role, as upstream's authorizer describes it in its reasons:
/// `RoleBinding "name/namespace" of Role "role" to ServiceAccount "sa/namespace"`.
struct Source<'a> {
    /// `""` for a ClusterRoleBinding.
    namespace: &'a str,
    name: &'a str,
    role_ref: &'a RoleRef,
    subject: &'a Subject,
}

impl std::fmt::Display for Source<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let role = format!("{} {:?}", self.role_ref.kind, self.role_ref.name);
        if self.namespace.is_empty() {
            write!(f, "ClusterRoleBinding {:?} of {role}", self.name)?;
        } else {
            let binding = format!("{}/{}", self.name, self.namespace);
            write!(f, "RoleBinding {binding:?} of {role}")?;
        }
        let subject = &self.subject.name;
        if self.subject.kind == "ServiceAccount" {
            let ns = self
                .subject
                .namespace
                .as_deref()
                .filter(|ns| !ns.is_empty())
                .unwrap_or(self.namespace);
            write!(f, " to ServiceAccount {:?}", format!("{subject}/{ns}"))
        } else {
            write!(f, " to {} {subject:?}", self.subject.kind)
        }
    }
}

/// Every rule the roles bound to `who` grant in `namespace` (cluster-wide bindings included;
/// `""`: cluster-wide only), each once, and why some bindings could not be resolved.
pub(crate) fn rules_for(
    st: &State,
    who: &Identity,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<String>) {
    let mut rules: Vec<PolicyRule> = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    visit_rules(st, who, Some(namespace), |_, found| {
        match found {
            Ok(found) => {
                for rule in found {
                    if !rules.contains(&rule) {
                        rules.push(rule);
                    }
                }
            }
            Err(e) if !errors.contains(&e) => errors.push(e),
            Err(_) => {}
        }
        false
    });
    (rules, errors)
}

/// Calls `visit` with each binding that gives `who` a role applying in `namespace` and that
/// role's rules (or why they could not be resolved), until it returns true.
fn visit_rules(
    st: &State,
    who: &Identity,
    namespace: Option<&str>,
    mut visit: impl FnMut(&Source<'_>, Result<Vec<PolicyRule>, String>) -> bool,
) {
    for binding in objects::<ClusterRoleBinding>(st, "clusterrolebindings", None) {
        let Some(subject) = bound(binding.subjects.as_deref(), who, "") else {
            continue;
        };
        let source = Source {
            namespace: "",
            name: binding.metadata.name.as_deref().unwrap_or(""),
            role_ref: &binding.role_ref,
            subject,
        };
        if visit(&source, cluster_role_rules(st, &binding.role_ref.name)) {
            return;
        }
    }
    let Some(ns) = namespace.filter(|ns| !ns.is_empty()) else {
        return;
    };
    for binding in objects::<RoleBinding>(st, "rolebindings", Some(ns)) {
        let Some(subject) = bound(binding.subjects.as_deref(), who, ns) else {
            continue;
        };
        let source = Source {
            namespace: ns,
            name: binding.metadata.name.as_deref().unwrap_or(""),
            role_ref: &binding.role_ref,
            subject,
        };
        if visit(&source, role_ref_rules(st, ns, &binding.role_ref)) {
            return;
        }
    }
}

/// The stored objects of an RBAC resource (in `namespace` only, when given) that decode.
fn objects<T: serde::de::DeserializeOwned>(
    st: &State,
    resource: &str,
    namespace: Option<&str>,
) -> Vec<T> {
    let key = GroupResourceRef {
        group: GROUP,
        resource,
    };
    let Some(store) = st.resource(&key) else {
        return Vec::new();
    };
    store
        .objects
        .iter()
        .filter(|((ns, _), _)| namespace.is_none_or(|want| ns == want))
        .filter_map(|(_, stored)| decode(&stored.obj))
        .collect()
}

fn decode<T: serde::de::DeserializeOwned>(obj: &Arc<Value>) -> Option<T> {
    serde_json::from_value(Value::clone(obj)).ok()
}

fn get<T: serde::de::DeserializeOwned>(
    st: &State,
    resource: &str,
    ns: &str,
    name: &str,
) -> Option<T> {
    let key = GroupResourceRef {
        group: GROUP,
        resource,
    };
    decode(&st.get(&key, &(ns.to_string(), name.to_string()))?)
}

/// The first of `subjects` of a binding in `binding_ns` (`""` for a ClusterRoleBinding) that
/// is `who`. A ServiceAccount subject without a namespace means the binding's own.
fn bound<'a>(
    subjects: Option<&'a [Subject]>,
    who: &Identity,
    binding_ns: &str,
) -> Option<&'a Subject> {
    subjects
        .into_iter()
        .flatten()
        .find(|s| match s.kind.as_str() {
            "User" => s.name == who.user,
            "Group" => who.groups.contains(&s.name),
            "ServiceAccount" => {
                let ns = s
                    .namespace
                    .as_deref()
                    .filter(|ns| !ns.is_empty())
                    .unwrap_or(binding_ns);
                !ns.is_empty() && who.user == service_account_user(ns, &s.name)
            }
            _ => false,
        })
}

fn role_ref_rules(st: &State, ns: &str, role_ref: &RoleRef) -> Result<Vec<PolicyRule>, String> {
    match role_ref.kind.as_str() {
        "ClusterRole" => cluster_role_rules(st, &role_ref.name),
        "Role" => get::<Role>(st, "roles", ns, &role_ref.name)
            .map(|role| role.rules.unwrap_or_default())
            .ok_or_else(|| format!("role.{GROUP} {:?} not found", role_ref.name)),
        other => Err(format!("unsupported role reference kind: {other:?}")),
    }
}

/// The rules of the ClusterRole `name`; for an aggregated one (`aggregationRule`), the rules
/// of every ClusterRole its selectors match, as the aggregation controller would write them.
fn cluster_role_rules(st: &State, name: &str) -> Result<Vec<PolicyRule>, String> {
    let role: ClusterRole = get(st, "clusterroles", "", name)
        .ok_or_else(|| format!("clusterrole.{GROUP} {name:?} not found"))?;
    let mut seen = HashSet::from([name.to_string()]);
    Ok(effective_rules(st, role, &mut seen))
}

fn effective_rules(st: &State, role: ClusterRole, seen: &mut HashSet<String>) -> Vec<PolicyRule> {
    let selectors: Vec<Value> = role
        .aggregation_rule
        .and_then(|a| a.cluster_role_selectors)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| serde_json::to_value(s).ok())
        .collect();
    if selectors.is_empty() {
        return role.rules.unwrap_or_default();
    }
    let mut rules: Vec<PolicyRule> = Vec::new();
    for other in objects::<ClusterRole>(st, "clusterroles", None) {
        let name = other.metadata.name.clone().unwrap_or_default();
        let empty = serde_json::Map::new();
        let labels = serde_json::to_value(&other.metadata.labels).unwrap_or(Value::Null);
        let labels = labels.as_object().unwrap_or(&empty);
        if seen.contains(&name) || !selectors.iter().any(|s| selector_matches(s, labels)) {
            continue;
        }
        seen.insert(name);
        for rule in effective_rules(st, other, seen) {
            if !rules.contains(&rule) {
                rules.push(rule);
            }
        }
    }
    rules
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(kind: &str, name: &str, namespace: Option<&str>) -> Subject {
        Subject {
            kind: kind.into(),
            name: name.into(),
            namespace: namespace.map(str::to_string),
            api_group: None,
        }
    }

    #[test]
    fn subjects_match_users_groups_and_service_accounts() {
        let sa = Identity::service_account("team", "robot");
        let yes = |s: Subject, binding_ns: &str| bound(Some(&[s]), &sa, binding_ns).is_some();
        assert!(yes(
            subject("User", "system:serviceaccount:team:robot", None),
            ""
        ));
        assert!(yes(
            subject("Group", "system:serviceaccounts:team", None),
            ""
        ));
        assert!(yes(subject("Group", "system:authenticated", None), ""));
        assert!(!yes(
            subject("Group", "system:serviceaccounts:other", None),
            ""
        ));
        assert!(yes(subject("ServiceAccount", "robot", Some("team")), ""));
        assert!(!yes(subject("ServiceAccount", "robot", Some("other")), ""));
        // Without a namespace, a ServiceAccount subject means the binding's namespace; a
        // ClusterRoleBinding has none, so it matches nobody.
        assert!(yes(subject("ServiceAccount", "robot", None), "team"));
        assert!(!yes(subject("ServiceAccount", "robot", None), "other"));
        assert!(!yes(subject("ServiceAccount", "robot", None), ""));
        assert!(bound(None, &sa, "team").is_none());
    }

    #[test]
    fn sources_are_described_as_upstream_describes_them() {
        let describe = |namespace: &str, binding: &str, role: (&str, &str), who: Subject| {
            let role_ref = RoleRef {
                api_group: Some(GROUP.into()),
                kind: role.0.into(),
                name: role.1.into(),
            };
            Source {
                namespace,
                name: binding,
                role_ref: &role_ref,
                subject: &who,
            }
            .to_string()
        };
        assert_eq!(
            describe(
                "team",
                "read",
                ("Role", "reader"),
                subject("ServiceAccount", "bot", None)
            ),
            r#"RoleBinding "read/team" of Role "reader" to ServiceAccount "bot/team""#
        );
        assert_eq!(
            describe(
                "",
                "system:discovery",
                ("ClusterRole", "system:discovery"),
                subject("Group", "system:authenticated", None)
            ),
            r#"ClusterRoleBinding "system:discovery" of ClusterRole "system:discovery" to Group "system:authenticated""#
        );
    }
}
