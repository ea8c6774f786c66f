//! Legacy discovery documents (`/api`, `/api/v1`, `/apis`, `/apis/<g>`, `/apis/<g>/<v>`),
//! `/version`, and the OpenAPI v3 index and per-group-version documents kubectl needs.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use serde_json::{Value, json};

use super::openapi_schemas::builtin_schemas;
use crate::kinds::KUBE_MINOR;
use crate::machinery::resource_info::ResourceInfo;
use crate::store::State;

fn infos(st: &State) -> Vec<Arc<ResourceInfo>> {
    let mut v: Vec<_> = st.served().cloned().collect();
    v.sort_by(|a, b| (&a.group, &a.plural).cmp(&(&b.group, &b.plural)));
    v
}

/// Served versions of each non-core group, in order, preferred first.
fn groups(st: &State) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for info in infos(st) {
        if info.group.is_empty() {
            continue;
        }
        let vs = out.entry(info.group.clone()).or_default();
        for v in &info.versions {
            if !vs.contains(v) {
                vs.push(v.clone());
            }
        }
    }
    out
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    let preferred = vs.first().cloned().unwrap_or(json!({}));
    json!({"name": name, "versions": vs, "preferredVersion": preferred})
}

/// `/api`.
pub fn core_versions(addr: &str) -> Value {
    json!({"kind": "APIVersions", "versions": ["v1"],
           "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}]})
}

/// `/apis`.
pub fn group_list(st: &State) -> Value {
    let groups: Vec<Value> = groups(st).iter().map(|(g, vs)| group_doc(g, vs)).collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `/apis/<g>`, if served.
pub fn group(st: &State, name: &str) -> Option<Value> {
    let groups = groups(st);
    let vs = groups.get(name)?;
    let mut doc = group_doc(name, vs);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// `/api/v1` or `/apis/<g>/<v>`, if served.
pub fn resource_list(st: &State, group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for info in infos(st) {
        if info.group != group || !info.serves(version) {
            continue;
        }
        let mut main = json!({
            "name": info.plural, "singularName": info.singular, "namespaced": info.namespaced,
            "kind": info.kind, "verbs": info.verbs,
        });
        omit_empty(&mut main, "shortNames", &info.short_names);
        omit_empty(&mut main, "categories", &info.categories);
        let mut entries = vec![main];
        for (sub, response, verbs) in subresources(&info) {
            let mut entry = json!({"name": format!("{}/{sub}", info.plural), "singularName": "",
                "namespaced": info.namespaced, "kind": response.kind, "verbs": verbs});
            if let Some((g, v)) = response.group_version {
                entry["group"] = json!(g);
                entry["version"] = json!(v);
            }
            entries.push(entry);
        }
        resources.extend(entries);
    }
    if resources.is_empty() {
        return None;
    }
    // Built-in groups list their resources and subresources sorted by name (go-restful's
    // routes); a CRD's group lists each resource, then its status and scale.
    if infos(st).iter().any(|i| i.group == group && i.builtin) {
        resources.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
    }
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}),
    )
}

/// `/version`.
pub fn version() -> Value {
    // The version emulated, and the oldest one this version stays compatible with (one minor
    // back), as kube-apiserver reports them since 1.31.
    let min_compatible = KUBE_MINOR.parse::<u32>().map_or_else(
        |_| KUBE_MINOR.to_string(),
        |m| m.saturating_sub(1).to_string(),
    );
    json!({"major": "1", "minor": KUBE_MINOR, "gitVersion": format!("v1.{KUBE_MINOR}.0-sim"),
           "emulationMajor": "1", "emulationMinor": KUBE_MINOR,
           "minCompatibilityMajor": "1", "minCompatibilityMinor": min_compatible,
           "gitCommit": "0000000", "gitTreeState": "clean", "buildDate": "2025-01-01T00:00:00Z",
           "goVersion": "go1.24", "compiler": "gc", "platform": "linux/amd64"})
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3/<gv>` as the store makes it: the paths upstream publishes for each kind (its
/// collection, its objects, their `status` and `scale`, and for a namespaced kind the list
/// across namespaces), each operation marked with the kind (kubectl looks kinds up by it;
/// its validation reads the PATCH parameters), and the schemas of custom resources (what
/// `kubectl explain` reads); [`with_builtin_schemas`] adds the built-in kinds'. `None` for a
/// group version nothing serves.
pub fn openapi_doc(st: &State, group: &str, version: &str) -> Option<Value> {
    let mut paths = serde_json::Map::new();
    let mut schemas = serde_json::Map::new();
    for info in infos(st) {
        if info.group != group || !info.serves(version) {
            continue;
        }
        schemas.extend(super::openapi_schemas::custom_resource_schemas(
            &info, version,
        ));
        let gvk = json!({"group": group, "version": version, "kind": info.kind});
        let prefix = format!("/{}", gv_path(group, version));
        let collection = if info.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}", info.plural)
        } else {
            format!("{prefix}/{}", info.plural)
        };
        let item = format!("{collection}/{{name}}");
        paths.insert(
            collection.clone(),
            path_item(&gvk, &["list", "post", "deletecollection"]),
        );
        paths.insert(
            item.clone(),
            path_item(&gvk, &["get", "put", "patch", "delete"]),
        );
        if info.status_subresource {
            paths.insert(
                format!("{item}/status"),
                path_item(&gvk, &["get", "put", "patch"]),
            );
        }
        if info.scale.is_some() {
            let scale = json!({"group": "autoscaling", "version": "v1", "kind": "Scale"});
            paths.insert(
                format!("{item}/scale"),
                path_item(&scale, &["get", "put", "patch"]),
            );
        }
        if info.namespaced {
            paths.insert(
                format!("{prefix}/{}", info.plural),
                path_item(&gvk, &["list"]),
            );
        }
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({"openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": format!("v1.{KUBE_MINOR}.0-sim")},
                "paths": paths, "components": {"schemas": schemas}}))
}

/// A path item with one operation per action (`list`, `post`, `deletecollection`, `get`,
/// `put`, `patch`, `delete`), each marked with its action and the kind it acts on.
fn path_item(gvk: &Value, actions: &[&str]) -> Value {
    let mut item = serde_json::Map::new();
    for &action in actions {
        let method = match action {
            "list" => "get",
            "deletecollection" => "delete",
            other => other,
        };
        let mut op = json!({
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
            "responses": {"200": {"description": "OK"}},
        });
        if action == "patch" {
            let body = json!({"schema": {"type": "object"}});
            op["parameters"] = json!([
                {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
                {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
                {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
            ]);
            op["requestBody"] = json!({"content": {
                "application/json-patch+json": body,
                "application/merge-patch+json": body,
                "application/apply-patch+yaml": body,
            }});
        }
        item.insert(method.to_string(), op);
    }
    Value::Object(item)
}

/// `doc` (an [`openapi_doc`] of `group`/`version`) with the built-in kinds' schemas added;
/// a custom resource's schema of the same name stays. Built outside the store's lock: the
/// built-in schemas never change.
pub fn with_builtin_schemas(mut doc: Value, group: &str, version: &str) -> Value {
    let (Some(built_in), Some(schemas)) = (
        builtin_schemas(group, version),
        doc.pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut),
    ) else {
        return doc;
    };
    for (name, schema) in &built_in.schemas {
        schemas
            .entry(name.clone())
            .or_insert_with(|| schema.clone());
    }
    doc
}

/// A stable hash of the document of `group`/`version` whose store-made part is `doc`, used
/// in `serverRelativeURL` (the built-in schemas enter by their precomputed hash).
fn doc_hash(doc: &Value, group: &str, version: &str) -> String {
    let mut h = DefaultHasher::new();
    doc.to_string().hash(&mut h);
    builtin_schemas(group, version)
        .map(|built_in| built_in.hash)
        .hash(&mut h);
    format!("{:016X}", h.finish())
}

/// Every (group, version) a resource is served in, once each, in discovery order.
pub(super) fn served_group_versions(st: &State) -> Vec<(String, String)> {
    let mut gvs: Vec<(String, String)> = Vec::new();
    for info in infos(st) {
        for v in &info.versions {
            let gv = (info.group.clone(), v.clone());
            if !gvs.contains(&gv) {
                gvs.push(gv);
            }
        }
    }
    gvs
}

/// `/openapi/v3`: every served group-version.
pub fn openapi_index(st: &State) -> Value {
    let mut paths = serde_json::Map::new();
    for (g, v) in served_group_versions(st) {
        let Some(doc) = openapi_doc(st, &g, &v) else {
            continue;
        };
        let p = gv_path(&g, &v);
        paths.insert(
            p.clone(),
            json!({"serverRelativeURL":
                format!("/openapi/v3/{p}?hash={}", doc_hash(&doc, &g, &v))}),
        );
    }
    json!({"paths": paths})
}

/// `Content-Type` of aggregated discovery documents.
pub const AGGREGATED_CT: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Whether an `Accept` header asks for aggregated discovery (v2).
pub fn wants_aggregated(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|range| {
            let p: Vec<&str> = range.split(';').map(str::trim).collect();
            p.contains(&"g=apidiscovery.k8s.io")
                && p.contains(&"v=v2")
                && p.contains(&"as=APIGroupDiscoveryList")
        })
    })
}

/// A response kind: the kind, and its group and version where they are not the resource's
/// own (`None`: upstream leaves them empty for built-ins).
struct ResponseKind {
    kind: String,
    group_version: Option<(String, String)>,
}

/// Sets `key` to `list` unless it is empty (upstream omits empty lists).
fn omit_empty(v: &mut Value, key: &str, list: &[String]) {
    if !list.is_empty() {
        v[key] = json!(list);
    }
}

/// The subresources a resource serves, with their response kinds and verbs: built-ins sorted
/// by name (`finalize` of namespaces, a pod's, `scale`, `status`), a CRD's status then scale.
fn subresources(info: &ResourceInfo) -> Vec<(&'static str, ResponseKind, Vec<&'static str>)> {
    let own = || ResponseKind {
        kind: info.kind.clone(),
        group_version: None,
    };
    let scale = || ResponseKind {
        kind: "Scale".into(),
        group_version: Some(("autoscaling".into(), "v1".into())),
    };
    let rw = vec!["get", "patch", "update"];
    let mut subs = Vec::new();
    if info.builtin && info.group.is_empty() && info.plural == "namespaces" {
        subs.push(("finalize", own(), vec!["update"]));
    }
    if info.builtin && info.group.is_empty() && info.plural == "pods" {
        subs.extend(pod_subresources());
    }
    if info.builtin && info.scale.is_some() {
        subs.push(("scale", scale(), rw.clone()));
    }
    if info.status_subresource {
        subs.push(("status", own(), rw.clone()));
    }
    if !info.builtin && info.scale.is_some() {
        subs.push(("scale", scale(), rw));
    }
    subs
}

/// A pod's subresources other than `status`, sorted by name: the actions
/// (`pod_actions`), its log, and the parts written on their own (`ephemeralcontainers`,
/// `resize`).
fn pod_subresources() -> Vec<(&'static str, ResponseKind, Vec<&'static str>)> {
    let core = |kind: &str| ResponseKind {
        kind: kind.into(),
        group_version: None,
    };
    let connect = vec!["create", "get"];
    let rw = vec!["get", "patch", "update"];
    vec![
        ("attach", core("PodAttachOptions"), connect.clone()),
        ("binding", core("Binding"), vec!["create"]),
        ("ephemeralcontainers", core("Pod"), rw.clone()),
        (
            "eviction",
            ResponseKind {
                kind: "Eviction".into(),
                group_version: Some(("policy".into(), "v1".into())),
            },
            vec!["create"],
        ),
        ("exec", core("PodExecOptions"), connect.clone()),
        ("log", core("Pod"), vec!["get"]),
        ("portforward", core("PodPortForwardOptions"), connect),
        (
            "proxy",
            core("PodProxyOptions"),
            vec!["create", "delete", "get", "patch", "update"],
        ),
        ("resize", core("Pod"), rw),
    ]
}

fn aggregated_resource(info: &ResourceInfo, version: &str) -> Value {
    // Upstream names the group and version of a CRD's kinds, not of built-in kinds.
    let kind_of = |r: &ResponseKind| match (&r.group_version, info.builtin) {
        (Some((g, v)), _) => json!({"group": g, "version": v, "kind": r.kind}),
        (None, true) => json!({"group": "", "version": "", "kind": r.kind}),
        (None, false) => json!({"group": info.group, "version": version, "kind": r.kind}),
    };
    let own = ResponseKind {
        kind: info.kind.clone(),
        group_version: None,
    };
    let subs: Vec<Value> = subresources(info)
        .into_iter()
        .map(|(sub, response, verbs)| {
            json!({"subresource": sub, "responseKind": kind_of(&response), "verbs": verbs})
        })
        .collect();
    let mut doc = json!({
        "resource": info.plural, "responseKind": kind_of(&own),
        "scope": if info.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": info.singular, "verbs": info.verbs,
    });
    omit_empty(&mut doc, "shortNames", &info.short_names);
    omit_empty(&mut doc, "categories", &info.categories);
    if !subs.is_empty() {
        doc["subresources"] = json!(subs);
    }
    doc
}

/// Aggregated discovery (`apidiscovery.k8s.io/v2`) for `/api` (`core = true`) or `/apis`.
pub fn aggregated(st: &State, core: bool) -> Value {
    let all = infos(st);
    let mut names: Vec<(String, Vec<String>)> = if core {
        vec![(String::new(), vec!["v1".to_string()])]
    } else {
        groups(st).into_iter().collect()
    };
    names.sort_by(|a, b| a.0.cmp(&b.0));
    let items: Vec<Value> = names
        .iter()
        .map(|(g, versions)| {
            let vs: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let resources: Vec<Value> = all
                        .iter()
                        .filter(|i| &i.group == g && i.serves(v))
                        .map(|i| aggregated_resource(i, v))
                        .collect();
                    json!({"version": v, "freshness": "Current", "resources": resources})
                })
                .collect();
            json!({"metadata": {"name": g}, "versions": vs})
        })
        .collect();
    json!({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
           "metadata": {}, "items": items})
}
