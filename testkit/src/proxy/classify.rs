//! Which verb, resource and namespace a request addresses, read from its method, path and
//! query as the simulator reads them (its URL layout and verb rules), so a fault selects the
//! same requests on either server.

use http::Method;

/// A resource request, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Classified {
    /// get, list, watch, create, update, patch, delete or deletecollection.
    pub verb: &'static str,
    /// The plural resource.
    pub resource: String,
    /// The subresource (`status`, `scale`, ...).
    pub subresource: Option<String>,
    /// The namespace in the path.
    pub namespace: Option<String>,
}

impl Classified {
    /// The resource as requests are counted: `<plural>` or `<plural>/<subresource>`.
    pub fn counted_resource(&self) -> String {
        match &self.subresource {
            None => self.resource.clone(),
            Some(sub) => format!("{}/{sub}", self.resource),
        }
    }
}

/// The path of a resource request, split.
struct ResourcePath {
    namespace: Option<String>,
    plural: String,
    name: Option<String>,
    subresource: Option<String>,
    legacy_watch: bool,
}

/// Classifies a request; `None` for anything that is not a resource request (discovery,
/// health, OpenAPI), or a method no verb has.
pub(crate) fn classify(method: &Method, path: &str, query: Option<&str>) -> Option<Classified> {
    let rp = resource_path(path)?;
    let watch = rp.legacy_watch || flag(query, "watch");
    let verb = match (rp.name.is_some(), method.as_str()) {
        (_, "GET") if watch => "watch",
        (false, "GET") => "list",
        (false, "POST") => "create",
        (false, "DELETE") => "deletecollection",
        (true, "GET") => "get",
        (true, "PUT") => "update",
        (true, "PATCH") => "patch",
        (true, "DELETE") => "delete",
        _ => return None,
    };
    Some(Classified {
        verb,
        resource: rp.plural,
        subresource: rp.subresource,
        namespace: rp.namespace,
    })
}

/// The value of the query parameter `key` (the first one), percent-decoded.
pub(crate) fn query_value(query: Option<&str>, key: &str) -> Option<String> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(k, _)| *k == key)
        .map(|(_, v)| decode(&v.replace('+', " ")))
}

/// A boolean query parameter: present and neither `false` nor `0`.
pub(crate) fn flag(query: Option<&str>, key: &str) -> bool {
    query_value(query, key).is_some_and(|v| !(v.eq_ignore_ascii_case("false") || v == "0"))
}

/// `/api/<v>/...` and `/apis/<group>/<v>/...` below the group version.
fn resource_path(path: &str) -> Option<ResourcePath> {
    let segs: Vec<String> = path
        .trim_end_matches('/')
        .split('/')
        .skip(1)
        .map(decode)
        .collect();
    let rest = match segs.first().map(String::as_str) {
        Some("api") if segs.len() > 2 => &segs[2..],
        Some("apis") if segs.len() > 3 => &segs[3..],
        _ => return None,
    };
    let (legacy_watch, rest) = match rest.first().map(String::as_str) {
        Some("watch") => (true, &rest[1..]),
        _ => (false, rest),
    };
    // `namespaces/<ns>/status` and `namespaces/<ns>/finalize` are a namespace's subresources.
    let namespaced = rest.len() >= 3
        && rest[0] == "namespaces"
        && !(rest.len() == 3 && matches!(rest[2].as_str(), "status" | "finalize"));
    let (namespace, tail) = if namespaced {
        (Some(rest[1].clone()), &rest[2..])
    } else {
        (None, rest)
    };
    // A pod's proxy takes the rest of the path to the pod.
    let proxied = tail.len() > 3 && tail[0] == "pods" && tail[2] == "proxy";
    let tail = if proxied { &tail[..3] } else { tail };
    if tail.is_empty() || tail.len() > 3 || tail.iter().any(String::is_empty) {
        return None;
    }
    Some(ResourcePath {
        namespace,
        plural: tail[0].clone(),
        name: tail.get(1).cloned(),
        subresource: tail.get(2).cloned(),
        legacy_watch,
    })
}

/// Percent-decodes a path segment or query value (invalid escapes stay as they are).
fn decode(segment: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16).map(|d| d as u8);
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verb_of(method: Method, path: &str, query: Option<&str>) -> Option<(&'static str, String)> {
        classify(&method, path, query).map(|c| (c.verb, c.counted_resource()))
    }

    #[test]
    fn verbs_and_resources_as_the_simulator_counts_them() {
        let get = Method::GET;
        let some = |verb: &'static str, resource: &str| Some((verb, resource.to_string()));
        assert_eq!(
            verb_of(get.clone(), "/api/v1/namespaces/a/configmaps", None),
            some("list", "configmaps")
        );
        assert_eq!(
            verb_of(
                get.clone(),
                "/api/v1/namespaces/a/configmaps",
                Some("watch=true&resourceVersion=5")
            ),
            some("watch", "configmaps")
        );
        assert_eq!(
            verb_of(
                get.clone(),
                "/api/v1/namespaces/a/configmaps",
                Some("watch=false")
            ),
            some("list", "configmaps")
        );
        assert_eq!(
            verb_of(get.clone(), "/api/v1/watch/namespaces/a/configmaps", None),
            some("watch", "configmaps")
        );
        assert_eq!(
            verb_of(get.clone(), "/apis/apps/v1/deployments", None),
            some("list", "deployments")
        );
        assert_eq!(
            verb_of(
                Method::PUT,
                "/apis/apps/v1/namespaces/a/deployments/d/status",
                None
            ),
            some("update", "deployments/status")
        );
        assert_eq!(
            verb_of(Method::PUT, "/api/v1/namespaces/a/finalize", None),
            some("update", "namespaces/finalize")
        );
        assert_eq!(
            verb_of(Method::DELETE, "/api/v1/namespaces/a/pods", None),
            some("deletecollection", "pods")
        );
        assert_eq!(
            verb_of(Method::PATCH, "/api/v1/namespaces/a/configmaps/x%2Fy", None),
            some("patch", "configmaps")
        );
        assert_eq!(
            verb_of(
                get.clone(),
                "/api/v1/namespaces/a/pods/p/proxy/some/path",
                None
            ),
            some("get", "pods/proxy")
        );
        for path in [
            "/api",
            "/api/v1",
            "/apis/apps/v1",
            "/version",
            "/openapi/v3",
        ] {
            assert_eq!(verb_of(get.clone(), path, None), None, "{path}");
        }
        assert_eq!(
            verb_of(Method::POST, "/api/v1/namespaces/a/pods/p", None),
            None
        );
    }

    #[test]
    fn the_namespace_is_the_paths() {
        let c = classify(&Method::GET, "/api/v1/namespaces/a/configmaps/x", None).unwrap();
        assert_eq!(c.namespace.as_deref(), Some("a"));
        let c = classify(&Method::GET, "/api/v1/namespaces/a", None).unwrap();
        assert_eq!((c.namespace, c.resource.as_str()), (None, "namespaces"));
    }

    #[test]
    fn query_values_are_decoded() {
        let q = Some("labelSelector=a%3Db&watch&continue=x+y");
        assert_eq!(query_value(q, "labelSelector").as_deref(), Some("a=b"));
        assert_eq!(query_value(q, "watch").as_deref(), Some(""));
        assert_eq!(query_value(q, "continue").as_deref(), Some("x y"));
        assert_eq!(query_value(q, "limit"), None);
        assert!(!flag(Some("watch=0"), "watch"));
    }
}
