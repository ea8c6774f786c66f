//! The 404 of a path the server does not serve, answered as kube-apiserver answers it. Which
//! answer depends on who would have served the path upstream:
//!
//! - built-in groups (core and every group of built-in kinds) are go-restful web services:
//!   an unknown version, resource or subresource, a resource in the wrong scope or a path
//!   too long is a JSON `Status` `NotFound` with the generic message and empty details;
//! - custom resource groups are served by the CRD handler, which hands an unknown version
//!   or resource (or a namespaced resource asked for without its namespace) to the final
//!   not-found handler, and answers an object path with a subresource the CRD does not have
//!   as "object not found" (even when the object exists);
//! - anything else (unknown groups, unknown top-level paths) reaches Go's `http.NotFound`:
//!   `text/plain` `404 page not found` with `X-Content-Type-Options: nosniff`;
//! - an OpenAPI v3 document of a group version not served is a 404 with an empty body.
//!
//! Observed on kube-apiserver v1.36 (see the differential suite's `not_found` probes).

use http::{HeaderValue, Response, header};

use super::respond::{self, Body};
use crate::api::route::ResourcePath;
use crate::machinery::status::ApiError;
use crate::store::State;

/// Go's `http.NotFound`: `404 page not found`, as plain text.
pub fn page_not_found() -> Response<Body> {
    let mut r = respond::text(404, "404 page not found\n");
    r.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    r
}

/// The OpenAPI v3 handler's 404: no body, no content type.
pub fn openapi_not_found() -> Response<Body> {
    let mut r = respond::bytes(404, "", bytes::Bytes::new());
    r.headers_mut().remove(header::CONTENT_TYPE);
    r
}

/// Whether `group` is served by built-in kinds (the core group always is).
fn builtin_group(st: &State, group: &str) -> bool {
    group.is_empty() || st.served().any(|info| info.builtin && info.group == group)
}

/// The 404 of a group or group-version discovery document the server does not serve.
pub fn group_version(st: &State, group: &str) -> Response<Body> {
    if builtin_group(st, group) {
        respond::error(&ApiError::unknown_path())
    } else {
        page_not_found()
    }
}

/// The 404 of a resource path the server does not serve, or `None` when it serves it (the
/// request handling then decides; it answers built-in paths' own 404s).
pub fn resource(st: &State, rp: &ResourcePath) -> Option<Response<Body>> {
    let builtin = builtin_group(st, &rp.group);
    let Some(info) = st.lookup(&rp.group, &rp.version, &rp.plural) else {
        return Some(if builtin {
            respond::error(&ApiError::unknown_path())
        } else {
            page_not_found()
        });
    };
    if info.builtin {
        return None;
    }
    let wrong_scope = (!info.namespaced && rp.namespace.is_some())
        || (info.namespaced && rp.namespace.is_none() && rp.name.is_some());
    if wrong_scope {
        return Some(page_not_found());
    }
    let known_sub = match rp.subresource.as_deref() {
        None => true,
        Some("status") => info.status_subresource,
        Some("scale") => info.scale.is_some(),
        Some(_) => false,
    };
    match (&rp.name, known_sub) {
        (Some(name), false) => Some(respond::error(&ApiError::not_found(&info, name))),
        _ => None,
    }
}

/// The 404 of a path no route matched: under a built-in group version a generic `Status`,
/// under a custom resource's object "object not found" (a path too long), else plain text.
pub fn unrouted(st: &State, path: &str) -> Response<Body> {
    let segs: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let (group, version, rest) = match segs.as_slice() {
        ["api", v, rest @ ..] => ("", *v, rest),
        ["apis", g, v, rest @ ..] => (*g, *v, rest),
        _ => return page_not_found(),
    };
    if builtin_group(st, group) {
        return respond::error(&ApiError::unknown_path());
    }
    let rest = match rest {
        ["namespaces", _, tail @ ..] => tail,
        tail => tail,
    };
    if let [plural, name, ..] = rest
        && let Some(info) = st.lookup(group, version, plural)
    {
        return respond::error(&ApiError::not_found(&info, name));
    }
    page_not_found()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::route::{Route, parse};
    use crate::kinds::builtins::builtins;
    use crate::store::StoreConfig;

    fn state() -> State {
        State::new(StoreConfig::default(), builtins(), Default::default())
    }

    fn plain(r: &Response<Body>) -> bool {
        r.status() == 404
            && r.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes())
                == Some(b"text/plain; charset=utf-8".as_slice())
            && r.headers()
                .get(header::X_CONTENT_TYPE_OPTIONS)
                .map(|v| v.as_bytes())
                == Some(b"nosniff".as_slice())
    }

    fn json_status(r: &Response<Body>) -> bool {
        r.status() == 404
            && r.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes())
                == Some(b"application/json".as_slice())
    }

    fn rp(path: &str) -> ResourcePath {
        match parse(path) {
            Route::Resource(r) => r,
            other => panic!("not a resource path: {other:?}"),
        }
    }

    #[test]
    fn unknown_groups_get_plain_text_and_builtin_groups_a_status() {
        let st = state();
        let r = resource(&st, &rp("/apis/nope.io/v1/foos")).expect("404");
        assert!(plain(&r));
        assert!(plain(&group_version(&st, "nope.io")));
        let r = resource(&st, &rp("/apis/apps/v9/deployments")).expect("404");
        assert!(json_status(&r));
        let r = resource(&st, &rp("/apis/apps/v1/foos")).expect("404");
        assert!(json_status(&r));
        assert!(json_status(&group_version(&st, "apps")));
        assert!(json_status(&group_version(&st, "")));
        assert!(resource(&st, &rp("/apis/apps/v1/deployments")).is_none());
        assert!(plain(&unrouted(&st, "/nope")));
        assert!(json_status(&unrouted(
            &st,
            "/api/v1/namespaces/a/pods/x/y/z"
        )));
        assert!(plain(&unrouted(
            &st,
            "/apis/nope.io/v1/namespaces/a/foos/x/y/z"
        )));
    }
}
