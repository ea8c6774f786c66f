//! How server-side apply merges lists and maps: associative lists by their keys (a
//! Deployment's containers by name, ports by containerPort and protocol, env by name; a
//! custom resource's `x-kubernetes-list-type: map` lists by `x-kubernetes-list-map-keys`),
//! sets by value, atomic lists and maps as a whole.
//!
//! Sources: Kubernetes docs, "Server-Side Apply": "Merge strategy" (the table of
//! `x-kubernetes-list-type` / `x-kubernetes-map-type` markers and their meaning); the
//! Kubernetes OpenAPI for the built-in list types (`PodSpec.containers`: map on `name`;
//! `Container.ports`: map on `containerPort`, `protocol` with `protocol` defaulting to
//! `TCP`; `Container.env`: map on `name`; `Container.args` and `PodSpec.tolerations`:
//! atomic; `LabelSelector`: atomic map); structured-merge-diff for the error wording.

use crate::apply::{apply_raw, entry, owned};
use crate::common;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::ResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

fn deployment(containers: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": containers}}}})
}

async fn apply_deployment(
    api: &Api<Deployment>,
    manager: &str,
    force: bool,
    containers: Value,
) -> Result<Value, kube::Error> {
    let mut params = PatchParams::apply(manager);
    if force {
        params = params.force();
    }
    let out = api
        .patch("web", &params, &Patch::Apply(deployment(containers)))
        .await?;
    Ok(serde_json::to_value(out).expect("json"))
}

fn container<'a>(obj: &'a Value, name: &str) -> &'a Value {
    obj["spec"]["template"]["spec"]["containers"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == name))
        .unwrap_or(&Value::Null)
}

fn conflict_fields(e: kube::Error) -> Vec<String> {
    match e {
        kube::Error::Api(s) => s
            .details
            .map(|d| d.causes.into_iter().map(|c| c.field).collect())
            .unwrap_or_default(),
        other => vec![other.to_string()],
    }
}

/// Docs, "Server-Side Apply": "Merge strategy" (`listType: map`: items merged by key, each
/// item and field owned separately) with the built-in markers of `containers`, `ports`
/// and `env`; an item or field the manager stops applying is removed when nobody else
/// owns it.
#[tokio::test]
async fn deployment_lists_merge_by_their_keys() {
    let server = common::server().await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    let first = apply_deployment(
        &api,
        "app-owner",
        false,
        json!([{"name": "app", "image": "nginx:1",
        "ports": [{"containerPort": 80}], "env": [{"name": "A", "value": "1"}]}]),
    )
    .await
    .expect("first apply");
    assert_eq!(
        owned(&first, "app-owner", "Apply"),
        json!({"f:spec": {"f:selector": {}, "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:name": {}, "f:image": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}},
                "f:env": {"k:{\"name\":\"A\"}": {".": {}, "f:name": {}, "f:value": {}}}}}}}}})
    );
    // A second manager adds a container, a port and an env var to "app": merged, no conflict.
    let second = apply_deployment(&api, "sidecar-owner", false, json!([
        {"name": "app", "ports": [{"containerPort": 9090, "protocol": "TCP"}], "env": [{"name": "B", "value": "2"}]},
        {"name": "sidecar", "image": "envoy"}]))
    .await
    .expect("second apply");
    let app = container(&second, "app");
    assert_eq!(app["image"], "nginx:1");
    assert_eq!(
        app["ports"],
        // The server defaults a port's protocol to TCP.
        json!([{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 9090, "protocol": "TCP"}])
    );
    assert_eq!(
        app["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
    );
    assert_eq!(container(&second, "sidecar")["image"], "envoy");
    // Changing another manager's item field is a conflict on that field's path.
    let err = apply_deployment(
        &api,
        "sidecar-owner",
        false,
        json!([{"name": "app", "image": "nginx:2"}]),
    )
    .await
    .expect_err("conflict");
    assert_eq!(
        conflict_fields(err),
        vec![".spec.template.spec.containers[name=\"app\"].image".to_string()]
    );
    // The first manager stops applying env A: removed; B (owned by the other) stays.
    let third = apply_deployment(
        &api,
        "app-owner",
        false,
        json!([{"name": "app", "image": "nginx:1",
        "ports": [{"containerPort": 80}]}]),
    )
    .await
    .expect("third apply");
    assert_eq!(
        container(&third, "app")["env"],
        json!([{"name": "B", "value": "2"}])
    );
    // The second manager stops applying its container: gone.
    let fourth = apply_deployment(&api, "sidecar-owner", false, json!([{"name": "app",
        "ports": [{"containerPort": 9090, "protocol": "TCP"}], "env": [{"name": "B", "value": "2"}]}]))
    .await
    .expect("fourth apply");
    assert_eq!(container(&fourth, "sidecar"), &Value::Null);
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Merge strategy" (`listType: atomic` and lists without a
/// marker are replaced as a whole and owned as one field: `args`, `tolerations`; an atomic
/// map such as a `LabelSelector` likewise).
#[tokio::test]
async fn atomic_lists_and_maps_are_owned_and_replaced_whole() {
    let server = common::server().await;
    let path = format!("{DEPLOYS}/web");
    let mut cfg = deployment(json!([{"name": "app", "image": "nginx", "args": ["--a", "--b"]}]));
    cfg["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "k1", "operator": "Exists"}]);
    let r = apply_raw(&server, &path, "fieldManager=first", &cfg.to_string()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let spec = &owned(&r.json(), "first", "Apply")["f:spec"]["f:template"]["f:spec"];
    assert_eq!(spec["f:tolerations"], json!({}));
    assert_eq!(
        spec["f:containers"]["k:{\"name\":\"app\"}"]["f:args"],
        json!({})
    );
    let mut other = deployment(json!([{"name": "app", "args": ["--c"]}]));
    other["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "k2", "operator": "Exists"}]);
    other["spec"]["selector"] = json!({"matchLabels": {"app": "web", "extra": "x"}});
    let r = apply_raw(&server, &path, "fieldManager=second", &other.to_string()).await;
    assert_eq!(r.status, 409);
    let fields: Vec<Value> = r.json()["details"]["causes"]
        .as_array()
        .map(|c| c.iter().map(|c| c["field"].clone()).collect())
        .unwrap_or_default();
    // Listed as structured-merge-diff iterates a set: a level's own fields before deeper ones.
    assert_eq!(
        fields,
        vec![
            json!(".spec.selector"),
            json!(".spec.template.spec.tolerations"),
            json!(".spec.template.spec.containers[name=\"app\"].args"),
        ]
    );
    // Forced: each atomic value is replaced, not merged.
    other["spec"]["selector"] = json!({"matchLabels": {"app": "web"}});
    let r = apply_raw(
        &server,
        &path,
        "fieldManager=second&force=true",
        &other.to_string(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let obj = r.json();
    assert_eq!(container(&obj, "app")["args"], json!(["--c"]));
    assert_eq!(
        obj["spec"]["template"]["spec"]["tolerations"],
        json!([{"key": "k2", "operator": "Exists"}])
    );
    server.shutdown().await;
}

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "items": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string"}, "size": {"type": "integer"}}}},
                        "tags": {"type": "array", "x-kubernetes-list-type": "set",
                            "items": {"type": "string"}},
                        "plain": {"type": "array", "items": {"type": "string"}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                            "additionalProperties": {"type": "string"}}}}}}}}]}
    })
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

/// Docs, "Server-Side Apply": "Merge strategy" for custom resources, from the CRD's
/// structural schema: `x-kubernetes-list-type: map` merges by `x-kubernetes-list-map-keys`,
/// `set` by value, no marker is atomic; `x-kubernetes-map-type: atomic` maps are owned
/// whole, other maps key by key. A field the schema does not declare cannot be typed
/// (kube-apiserver answers 500 `failed to create typed patch object`).
#[tokio::test]
async fn custom_resources_merge_by_their_schema_markers() {
    let server = common::server().await;
    let crds: Api<CustomResourceDefinition> = Api::all(server.client().expect("client"));
    let crd: CustomResourceDefinition = serde_json::from_value(widget_crd()).expect("crd");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("crd");
    let name = crd.name_any();
    common::eventually_async("the CRD established", common::LIMIT, || async {
        let got = crds.get(&name).await.ok();
        got.and_then(|c| c.status)
            .and_then(|s| s.conditions)
            .is_some_and(|c| {
                c.iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            })
    })
    .await;
    let path = "/apis/example.com/v1/namespaces/default/widgets/w";
    let first = widget(
        json!({"items": [{"name": "a", "size": 1}], "tags": ["x"], "plain": ["1"],
        "labels": {"l1": "v"}, "selector": {"s1": "v"}}),
    );
    let r = apply_raw(&server, path, "fieldManager=first", &first.to_string()).await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        owned(&r.json(), "first", "Apply"),
        json!({"f:spec": {"f:items": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:size": {}}},
            "f:tags": {"v:\"x\"": {}}, "f:plain": {}, "f:labels": {"f:l1": {}}, "f:selector": {}}})
    );
    let second =
        widget(json!({"items": [{"name": "b", "size": 2}], "tags": ["y"], "labels": {"l2": "v"}}));
    let r = apply_raw(&server, path, "fieldManager=second", &second.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let spec = r.json()["spec"].clone();
    assert_eq!(
        spec["items"],
        json!([{"name": "a", "size": 1}, {"name": "b", "size": 2}])
    );
    assert_eq!(spec["tags"], json!(["x", "y"]));
    assert_eq!(spec["labels"], json!({"l1": "v", "l2": "v"}));
    // Atomic list and atomic map: another value is a conflict on the whole field.
    let third = widget(json!({"plain": ["2"], "selector": {"s2": "v"}}));
    let r = apply_raw(&server, path, "fieldManager=second", &third.to_string()).await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "Apply failed with 2 conflicts: conflicts with \"first\":\n- .spec.plain\n- .spec.selector"
    );
    // Items are identified by their keys: two items with one key cannot be applied.
    let dup = widget(json!({"items": [{"name": "a"}, {"name": "a"}]}));
    let r = apply_raw(&server, path, "fieldManager=third", &dup.to_string()).await;
    assert_eq!(r.status, 500, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "failed to create typed patch object (/w; example.com/v1, Kind=Widget): .spec.items: duplicate entries for key [name=\"a\"]"
    );
    let bogus = widget(json!({"bogus": 1}));
    let r = apply_raw(&server, path, "fieldManager=third", &bogus.to_string()).await;
    assert_eq!(r.status, 500, "{}", r.body);
    assert!(
        r.json().get("reason").is_none(),
        "a plain error has no reason"
    );
    assert_eq!(
        r.json()["message"],
        "failed to create typed patch object (/w; example.com/v1, Kind=Widget): .spec.bogus: field not declared in schema"
    );
    assert!(entry(&r.json(), "third", "Apply").is_none());
    server.shutdown().await;
}
