//! URL layout: which endpoint a path names.

/// A parsed request path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// `/api`.
    CoreVersions,
    /// `/apis`.
    Groups,
    /// `/apis/<group>`.
    Group(String),
    /// `/api/v1` or `/apis/<group>/<version>`.
    GroupVersion(String, String),
    /// A resource collection, object or subresource.
    Resource(ResourcePath),
    /// `/version`.
    Version,
    /// `/healthz`, `/livez`, `/readyz`.
    Health,
    /// `/openapi/v2`.
    OpenApiV2,
    /// `/openapi/v3`.
    OpenApiIndex,
    /// `/openapi/v3/<api/v1 | apis/g/v>`.
    OpenApiDoc(String, String),
    /// `/__sim/...`: simulator controls.
    Sim(Vec<String>),
    /// Anything else.
    Unknown,
}

/// Path of a resource request, before resolving the resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourcePath {
    /// API group ("" for core).
    pub group: String,
    /// Version.
    pub version: String,
    /// Namespace from the URL.
    pub namespace: Option<String>,
    /// Plural resource.
    pub plural: String,
    /// Object name.
    pub name: Option<String>,
    /// Subresource (`status`, `scale`, `finalize`).
    pub subresource: Option<String>,
    /// Legacy `/watch/` prefix used.
    pub legacy_watch: bool,
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

fn decode(seg: &str) -> String {
    let bytes = seg.as_bytes();
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

fn resource(group: &str, version: &str, rest: &[String]) -> Route {
    let (legacy_watch, rest) = match rest.first().map(String::as_str) {
        Some("watch") => (true, &rest[1..]),
        _ => (false, rest),
    };
    let namespaced_path = rest.len() >= 3
        && rest[0] == "namespaces"
        && !(rest.len() == 3 && matches!(rest[2].as_str(), "status" | "finalize"));
    let (namespace, tail) = if namespaced_path {
        (Some(rest[1].clone()), &rest[2..])
    } else {
        (None, rest)
    };
    // A pod's proxy takes the rest of the path to the pod (`pods/<name>/proxy/<path>`).
    let proxied = tail.len() > 3 && tail[0] == "pods" && tail[2] == "proxy";
    let tail = if proxied { &tail[..3] } else { tail };
    if tail.is_empty() || tail.len() > 3 || tail.iter().any(String::is_empty) {
        return Route::Unknown;
    }
    Route::Resource(ResourcePath {
        group: group.to_string(),
        version: version.to_string(),
        namespace,
        plural: tail[0].clone(),
        name: tail.get(1).cloned(),
        subresource: tail.get(2).cloned(),
        legacy_watch,
    })
}

/// Parses a request path.
pub fn parse(path: &str) -> Route {
    let segs: Vec<String> = path
        .trim_end_matches('/')
        .split('/')
        .skip(1)
        .map(decode)
        .collect();
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    match s.as_slice() {
        ["api"] => Route::CoreVersions,
        ["api", "v1"] => Route::GroupVersion(String::new(), "v1".into()),
        ["api", v, ..] => resource("", v, &segs[2..]),
        ["apis"] => Route::Groups,
        ["apis", g] => Route::Group((*g).to_string()),
        ["apis", g, v] => Route::GroupVersion((*g).to_string(), (*v).to_string()),
        ["apis", g, v, ..] => resource(g, v, &segs[3..]),
        ["version"] => Route::Version,
        ["healthz"] | ["livez"] | ["readyz"] => Route::Health,
        ["healthz" | "livez" | "readyz", _] => Route::Health,
        ["openapi", "v2"] => Route::OpenApiV2,
        ["openapi", "v3"] => Route::OpenApiIndex,
        ["openapi", "v3", "api", "v1"] => Route::OpenApiDoc(String::new(), "v1".into()),
        ["openapi", "v3", "apis", g, v] => Route::OpenApiDoc((*g).to_string(), (*v).to_string()),
        ["__sim", ..] => Route::Sim(segs[1..].to_vec()),
        _ => Route::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rp(path: &str) -> ResourcePath {
        match parse(path) {
            Route::Resource(r) => r,
            other => panic!("not a resource path: {other:?}"),
        }
    }

    #[test]
    fn parses_layouts() {
        let r = rp("/api/v1/namespaces/ns/pods/p/status");
        assert_eq!(
            (
                r.namespace.as_deref(),
                r.plural.as_str(),
                r.name.as_deref(),
                r.subresource.as_deref()
            ),
            (Some("ns"), "pods", Some("p"), Some("status"))
        );
        let r = rp("/api/v1/namespaces/ns");
        assert_eq!(
            (r.namespace, r.plural.as_str(), r.name.as_deref()),
            (None, "namespaces", Some("ns"))
        );
        let r = rp("/api/v1/namespaces/ns/finalize");
        assert_eq!(r.subresource.as_deref(), Some("finalize"));
        let r = rp("/apis/apps/v1/deployments");
        assert_eq!((r.group.as_str(), r.namespace), ("apps", None));
        let r = rp("/api/v1/watch/namespaces/a/configmaps");
        assert!(r.legacy_watch);
        assert_eq!(
            parse("/apis/apps/v1"),
            Route::GroupVersion("apps".into(), "v1".into())
        );
        assert_eq!(
            parse("/openapi/v3/apis/apps/v1"),
            Route::OpenApiDoc("apps".into(), "v1".into())
        );
        assert_eq!(parse("/nope"), Route::Unknown);
        assert_eq!(parse("/api/v1/namespaces/a/b/c/d/e"), Route::Unknown);
        let r = rp("/api/v1/namespaces/a/pods/p/proxy/some/path");
        assert_eq!(
            (r.name.as_deref(), r.subresource.as_deref()),
            (Some("p"), Some("proxy"))
        );
        assert_eq!(
            rp("/api/v1/namespaces/a/configmaps/x%2Fy").name.as_deref(),
            Some("x/y")
        );
    }
}
