//! The errors authentication and authorization answer with: 401 Unauthorized and 403
//! Forbidden, worded like kube-apiserver's (`<resource>.<group> "<name>" is forbidden: User
//! "<user>" cannot <verb> resource "<resource>" in API group "<group>" in the namespace
//! "<ns>"`, `... at the cluster scope`, `forbidden: User "<user>" cannot <verb> path "<path>"`).

use super::attributes::Attributes;
use crate::machinery::status::ApiError;

/// 401: no credentials, or credentials the server does not accept.
pub(crate) fn unauthorized() -> ApiError {
    ApiError::new(401, "Unauthorized", "Unauthorized")
}

/// What `user` was refused, without the resource prefix.
fn refusal(user: &str, attrs: &Attributes) -> String {
    let verb = &attrs.verb;
    match &attrs.resource {
        None => format!("User {user:?} cannot {verb} path {:?}", attrs.path),
        Some(res) => {
            let (resource, group) = (res.combined(), &res.group);
            match res.namespace.as_deref().filter(|ns| !ns.is_empty()) {
                Some(ns) => format!(
                    "User {user:?} cannot {verb} resource {resource:?} in API group {group:?} in the namespace {ns:?}"
                ),
                None => format!(
                    "User {user:?} cannot {verb} resource {resource:?} in API group {group:?} at the cluster scope"
                ),
            }
        }
    }
}

/// 403 for `user` and the request `attrs`; `reason` (the authorizer's explanation, such as a
/// binding's missing role) follows the message after `: ` when not empty.
pub(crate) fn forbidden(user: &str, attrs: &Attributes, reason: &str) -> ApiError {
    let mut why = refusal(user, attrs);
    if !reason.is_empty() {
        why = format!("{why}: {reason}");
    }
    let Some(res) = &attrs.resource else {
        return ApiError::new(403, "Forbidden", format!("forbidden: {why}"));
    };
    let name = res.name.as_deref().unwrap_or("");
    ApiError::forbidden_on(&res.group, &res.resource, name, &why)
}

#[cfg(test)]
mod tests {
    use super::super::attributes::ResourceAttributes;
    use super::*;

    fn attrs(
        verb: &str,
        group: &str,
        resource: &str,
        sub: Option<&str>,
        ns: Option<&str>,
        name: Option<&str>,
    ) -> Attributes {
        Attributes {
            verb: verb.into(),
            path: "/x".into(),
            resource: Some(ResourceAttributes {
                group: group.into(),
                version: "v1".into(),
                resource: resource.into(),
                subresource: sub.map(str::to_string),
                namespace: ns.map(str::to_string),
                name: name.map(str::to_string),
            }),
        }
    }

    #[test]
    fn messages_match_upstream_wording() {
        let u = "system:serviceaccount:default:sa";
        let e = forbidden(
            u,
            &attrs(
                "update",
                "apps",
                "deployments",
                Some("scale"),
                Some("default"),
                Some("d"),
            ),
            "",
        );
        assert_eq!(
            e.message,
            r#"deployments.apps "d" is forbidden: User "system:serviceaccount:default:sa" cannot update resource "deployments/scale" in API group "apps" in the namespace "default""#
        );
        assert_eq!((e.code, e.reason), (403, "Forbidden"));
        assert_eq!(e.details.kind.as_deref(), Some("deployments"));
        let e = forbidden(u, &attrs("list", "", "nodes", None, None, None), "");
        assert_eq!(
            e.message,
            r#"nodes is forbidden: User "system:serviceaccount:default:sa" cannot list resource "nodes" in API group "" at the cluster scope"#
        );
        let path = Attributes {
            verb: "get".into(),
            path: "/metrics".into(),
            resource: None,
        };
        let e = forbidden(u, &path, "");
        assert_eq!(
            e.message,
            r#"forbidden: User "system:serviceaccount:default:sa" cannot get path "/metrics""#
        );
        let e = forbidden(
            u,
            &path,
            r#"RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#,
        );
        assert!(e.message.ends_with(r#"cannot get path "/metrics": RBAC: clusterrole.rbac.authorization.k8s.io "gone" not found"#));
    }
}
