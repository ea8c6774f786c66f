//! Whether one RBAC `PolicyRule` allows a request: verbs, API groups, resources (with
//! subresources and the `*` and `*/<subresource>` wildcards), `resourceNames`, and
//! non-resource URLs (exact, or a prefix ending in `*`), as kube-apiserver's RBAC
//! authorizer matches them.

use k8s_openapi::api::rbac::v1::PolicyRule;

use super::attributes::Attributes;

/// The wildcard of verbs, groups, resources and non-resource URLs.
const ALL: &str = "*";

/// Whether `rule` allows the request described by `attrs`.
pub(crate) fn allows(rule: &PolicyRule, attrs: &Attributes) -> bool {
    if !verb_matches(rule, &attrs.verb) {
        return false;
    }
    match &attrs.resource {
        Some(res) => {
            group_matches(rule, &res.group)
                && resource_matches(rule, &res.combined(), res.subresource.as_deref())
                && name_matches(rule, res.name.as_deref())
        }
        None => non_resource_url_matches(rule, &attrs.path),
    }
}

fn verb_matches(rule: &PolicyRule, verb: &str) -> bool {
    rule.verbs.iter().any(|v| v == ALL || v == verb)
}

fn group_matches(rule: &PolicyRule, group: &str) -> bool {
    rule.api_groups
        .iter()
        .flatten()
        .any(|g| g == ALL || g == group)
}

/// `combined` is `resource` or `resource/subresource`; a rule's `*/<subresource>` matches that
/// subresource of every resource.
fn resource_matches(rule: &PolicyRule, combined: &str, subresource: Option<&str>) -> bool {
    rule.resources.iter().flatten().any(|r| {
        if r == ALL || r == combined {
            return true;
        }
        match subresource {
            Some(sub) => r.strip_prefix("*/").is_some_and(|s| s == sub),
            None => false,
        }
    })
}

/// A rule without `resourceNames` allows every name; one with them only requests that name
/// one of them (so never a list without a `metadata.name` field selector, nor a create).
fn name_matches(rule: &PolicyRule, name: Option<&str>) -> bool {
    match rule.resource_names.as_deref() {
        None | Some([]) => true,
        Some(names) => name.is_some_and(|n| names.iter().any(|x| x == n)),
    }
}

fn non_resource_url_matches(rule: &PolicyRule, path: &str) -> bool {
    rule.non_resource_urls.iter().flatten().any(|u| {
        u == ALL
            || u == path
            || u.strip_suffix('*')
                .is_some_and(|prefix| path.starts_with(prefix))
    })
}

#[cfg(test)]
mod tests {
    use super::super::attributes::ResourceAttributes;
    use super::*;

    fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
        let strings = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        PolicyRule {
            api_groups: Some(strings(groups)),
            resources: Some(strings(resources)),
            verbs: strings(verbs),
            ..Default::default()
        }
    }

    fn request(verb: &str, group: &str, resource: &str, name: Option<&str>) -> Attributes {
        let (resource, subresource) = match resource.split_once('/') {
            Some((r, s)) => (r, Some(s.to_string())),
            None => (resource, None),
        };
        Attributes {
            verb: verb.into(),
            path: String::new(),
            resource: Some(ResourceAttributes {
                group: group.into(),
                version: "v1".into(),
                resource: resource.into(),
                subresource,
                namespace: Some("default".into()),
                name: name.map(str::to_string),
            }),
        }
    }

    /// Whether `r` allows the request `request` describes.
    fn can(r: &PolicyRule, verb: &str, group: &str, resource: &str, name: Option<&str>) -> bool {
        allows(r, &request(verb, group, resource, name))
    }

    fn path(verb: &str, path: &str) -> Attributes {
        Attributes {
            verb: verb.into(),
            path: path.into(),
            resource: None,
        }
    }

    #[test]
    fn verbs_groups_and_resources_must_all_match() {
        let r = rule(&["apps"], &["deployments"], &["get", "list"]);
        assert!(can(&r, "get", "apps", "deployments", Some("d")));
        assert!(can(&r, "list", "apps", "deployments", None));
        assert!(!can(&r, "watch", "apps", "deployments", None));
        assert!(!can(&r, "get", "", "deployments", Some("d")));
        assert!(!can(&r, "get", "apps", "replicasets", Some("d")));
    }

    #[test]
    fn a_subresource_needs_its_own_grant() {
        let r = rule(&["apps"], &["deployments"], &["update"]);
        assert!(!can(&r, "update", "apps", "deployments/scale", Some("d")));
        let r = rule(&["apps"], &["deployments/scale"], &["update"]);
        assert!(can(&r, "update", "apps", "deployments/scale", Some("d")));
        assert!(!can(&r, "update", "apps", "deployments", Some("d")));
        assert!(!can(&r, "update", "apps", "deployments/status", Some("d")));
    }

    #[test]
    fn wildcards_cover_everything_of_their_field() {
        let r = rule(&["*"], &["*"], &["*"]);
        assert!(can(&r, "deletecollection", "x.io", "foos", None));
        assert!(can(&r, "patch", "x.io", "foos/status", Some("f")));
        let r = rule(&["apps"], &["*/scale"], &["get"]);
        assert!(can(&r, "get", "apps", "statefulsets/scale", Some("s")));
        assert!(!can(&r, "get", "apps", "statefulsets", Some("s")));
        assert!(!can(&r, "get", "apps", "statefulsets/status", Some("s")));
    }

    #[test]
    fn resource_names_restrict_to_named_requests() {
        let mut r = rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["get", "update", "list"],
        );
        r.resource_names = Some(vec!["mine".into()]);
        let g = "coordination.k8s.io";
        assert!(can(&r, "get", g, "leases", Some("mine")));
        assert!(!can(&r, "get", g, "leases", Some("theirs")));
        assert!(!can(&r, "list", g, "leases", None));
        assert!(can(&r, "list", g, "leases", Some("mine")));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_star_prefix() {
        let r = PolicyRule {
            non_resource_urls: Some(vec!["/healthz".into(), "/apis/*".into()]),
            verbs: vec!["get".into()],
            ..Default::default()
        };
        assert!(allows(&r, &path("get", "/healthz")));
        assert!(!allows(&r, &path("get", "/healthz/etcd")));
        assert!(allows(&r, &path("get", "/apis/apps/v1")));
        assert!(!allows(&r, &path("get", "/apis")));
        assert!(!allows(&r, &path("post", "/healthz")));
        // A resource rule never allows a path, nor a URL rule a resource.
        assert!(!allows(
            &rule(&["*"], &["*"], &["*"]),
            &path("get", "/healthz")
        ));
        assert!(!can(&r, "get", "", "pods", Some("p")));
    }
}
