//! What a request asks to do, in the terms RBAC decides on (kube-apiserver's `RequestInfo`):
//! the verb, and either the resource (group, resource, subresource, namespace, name) or the
//! non-resource path.

use http::Method;

use crate::api::route::{ResourcePath, Route};
use crate::machinery::query::Query;

/// A resource request's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceAttributes {
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource.
    pub resource: String,
    /// Subresource (`status`, `scale`, `token`, ...).
    pub subresource: Option<String>,
    /// Namespace; for a `namespaces` object, its own name (as upstream).
    pub namespace: Option<String>,
    /// Object name; for list and watch, a `metadata.name=` field selector's value.
    pub name: Option<String>,
}

impl ResourceAttributes {
    /// `resource` or `resource/subresource`, as rules and messages name it.
    pub fn combined(&self) -> String {
        match &self.subresource {
            Some(sub) => format!("{}/{sub}", self.resource),
            None => self.resource.clone(),
        }
    }
}

/// One request, as the authorizer sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attributes {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `delete`, `deletecollection` for
    /// resources; the lower-case HTTP method for other paths.
    pub verb: String,
    /// The request path (what non-resource rules match).
    pub path: String,
    /// The resource, for resource requests.
    pub resource: Option<ResourceAttributes>,
}

/// The attributes of a request to `path` (already routed as `route`).
pub(crate) fn of_request(method: &Method, path: &str, route: &Route, query: &Query) -> Attributes {
    match route {
        Route::Resource(rp) => Attributes {
            verb: resource_verb(method, rp, query),
            path: path.to_string(),
            resource: Some(resource_attributes(method, rp, query)),
        },
        _ => Attributes {
            verb: method.as_str().to_ascii_lowercase(),
            path: path.to_string(),
            resource: None,
        },
    }
}

fn resource_verb(method: &Method, rp: &ResourcePath, query: &Query) -> String {
    let watch = rp.legacy_watch || query.flag("watch");
    let named = rp.name.is_some();
    match method.as_str() {
        "GET" | "HEAD" if watch => "watch",
        "GET" | "HEAD" if named => "get",
        "GET" | "HEAD" => "list",
        "POST" => "create",
        "PUT" => "update",
        "PATCH" => "patch",
        "DELETE" if named => "delete",
        "DELETE" => "deletecollection",
        other => return other.to_ascii_lowercase(),
    }
    .to_string()
}

fn resource_attributes(method: &Method, rp: &ResourcePath, query: &Query) -> ResourceAttributes {
    let is_namespace_object = rp.group.is_empty() && rp.plural == "namespaces";
    let namespace = if is_namespace_object {
        rp.name.clone()
    } else {
        rp.namespace.clone()
    };
    let collection_read = rp.name.is_none() && matches!(method.as_str(), "GET" | "HEAD" | "DELETE");
    let name = match &rp.name {
        Some(name) => Some(name.clone()),
        None if collection_read => single_name_selector(query.get("fieldSelector")),
        None => None,
    };
    ResourceAttributes {
        group: rp.group.clone(),
        version: rp.version.clone(),
        resource: rp.plural.clone(),
        subresource: rp.subresource.clone(),
        namespace,
        name,
    }
}

/// The name a `metadata.name=<name>` (or `==`) field selector pins a list or watch to, which
/// upstream authorizes like a request for that object (so `resourceNames` rules allow it).
fn single_name_selector(selector: Option<&str>) -> Option<String> {
    let selector = selector?;
    let mut names = selector.split(',').filter_map(|term| {
        let (key, value) = term
            .split_once("==")
            .or_else(|| term.split_once('='))
            .filter(|(key, _)| !key.ends_with('!'))?;
        (key.trim() == "metadata.name").then(|| value.trim().to_string())
    });
    let name = names.next()?;
    (names.next().is_none() && !name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::route::parse;

    fn attrs(method: Method, uri: &str) -> Attributes {
        let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
        of_request(&method, path, &parse(path), &Query::parse(Some(query)))
    }

    #[test]
    fn verbs_follow_method_name_and_watch() {
        let verb = |m: Method, uri: &str| attrs(m, uri).verb;
        assert_eq!(verb(Method::GET, "/api/v1/namespaces/a/pods"), "list");
        assert_eq!(
            verb(Method::GET, "/api/v1/namespaces/a/pods?watch=true"),
            "watch"
        );
        assert_eq!(
            verb(Method::GET, "/api/v1/watch/namespaces/a/pods"),
            "watch"
        );
        assert_eq!(verb(Method::GET, "/api/v1/namespaces/a/pods/p"), "get");
        assert_eq!(verb(Method::POST, "/api/v1/namespaces/a/pods"), "create");
        assert_eq!(verb(Method::PUT, "/api/v1/namespaces/a/pods/p"), "update");
        assert_eq!(verb(Method::PATCH, "/api/v1/namespaces/a/pods/p"), "patch");
        assert_eq!(
            verb(Method::DELETE, "/api/v1/namespaces/a/pods/p"),
            "delete"
        );
        assert_eq!(
            verb(Method::DELETE, "/api/v1/namespaces/a/pods"),
            "deletecollection"
        );
        assert_eq!(verb(Method::GET, "/healthz"), "get");
        assert_eq!(verb(Method::POST, "/apis"), "post");
    }

    #[test]
    fn targets_carry_subresource_namespace_and_name() {
        let a = attrs(
            Method::PUT,
            "/apis/apps/v1/namespaces/a/deployments/d/scale",
        );
        let r = a.resource.unwrap();
        assert_eq!(r.combined(), "deployments/scale");
        assert_eq!(
            (r.namespace.as_deref(), r.name.as_deref()),
            (Some("a"), Some("d"))
        );
        let r = attrs(Method::GET, "/api/v1/namespaces/kube-system")
            .resource
            .unwrap();
        assert_eq!(r.namespace.as_deref(), Some("kube-system"));
        let r = attrs(
            Method::GET,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        )
        .resource
        .unwrap();
        assert_eq!((r.namespace, r.name), (None, None));
        let r = attrs(
            Method::POST,
            "/api/v1/namespaces/a/serviceaccounts/sa/token",
        )
        .resource
        .unwrap();
        assert_eq!(
            (r.combined().as_str(), r.name.as_deref()),
            ("serviceaccounts/token", Some("sa"))
        );
    }

    #[test]
    fn a_name_field_selector_names_a_list() {
        let name = |uri: &str| attrs(Method::GET, uri).resource.unwrap().name;
        let base = "/apis/coordination.k8s.io/v1/namespaces/a/leases";
        assert_eq!(
            name(&format!("{base}?fieldSelector=metadata.name%3Dl")),
            Some("l".into())
        );
        assert_eq!(
            name(&format!("{base}?fieldSelector=metadata.name%3D%3Dl")),
            Some("l".into())
        );
        assert_eq!(
            name(&format!("{base}?fieldSelector=metadata.name!%3Dl")),
            None
        );
        assert_eq!(name(base), None);
    }
}
