//! Server-side apply through the real `kube::Client` (`Api::patch` with `Patch::Apply`) and
//! raw HTTP: creation, ownership of the applied fields, conflicts and force, shared
//! ownership, removal of fields no longer applied, updates taking fields from appliers, dry
//! runs and bad input.
//!
//! Sources: Kubernetes docs, "Server-Side Apply" (sections named on each test); the wording
//! of errors is kube-apiserver's (apimachinery `managedfields/internal/conflict.go`,
//! `versioncheck.go`, `structuredmerge.go`; apiserver `endpoints/handlers/patch.go`;
//! `ValidatePatchOptions`).

use crate::common;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

pub(crate) const CMS: &str = "/api/v1/namespaces/default/configmaps";
pub(crate) const APPLY_CT: &str = "application/apply-patch+yaml";

/// A ConfigMap applied configuration.
pub(crate) fn cm(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
}

/// The `managedFields` entry of `manager` with `operation`, if any.
pub(crate) fn entry(obj: &Value, manager: &str, operation: &str) -> Option<Value> {
    obj.pointer("/metadata/managedFields")?
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
        .cloned()
}

/// The `fieldsV1` of that entry (`null` when there is none).
pub(crate) fn owned(obj: &Value, manager: &str, operation: &str) -> Value {
    entry(obj, manager, operation).map_or(Value::Null, |e| e["fieldsV1"].clone())
}

/// `(manager, operation)` of every entry, in order.
pub(crate) fn owners(obj: &Value) -> Vec<(String, String)> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| {
                    let s = |k: &str| e[k].as_str().unwrap_or_default().to_string();
                    (s("manager"), s("operation"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Sends a server-side apply as kubectl does (YAML or JSON text) and returns the reply.
pub(crate) async fn apply_raw(
    server: &apiserver_sim::ApiServer,
    path: &str,
    query: &str,
    body: &str,
) -> common::Raw {
    let target = format!("{path}?{query}");
    common::raw(
        server,
        "PATCH",
        &target,
        &[("Content-Type", APPLY_CT)],
        body.as_bytes(),
    )
    .await
}

pub(crate) async fn get(server: &apiserver_sim::ApiServer, name: &str) -> common::Raw {
    common::raw(server, "GET", &format!("{CMS}/{name}"), &[], b"").await
}

fn api(server: &apiserver_sim::ApiServer) -> Api<ConfigMap> {
    Api::default_namespaced(server.client().expect("client"))
}

async fn kube_apply(
    server: &apiserver_sim::ApiServer,
    manager: &str,
    force: bool,
    obj: Value,
) -> Result<Value, kube::Error> {
    let name = obj["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut params = PatchParams::apply(manager);
    if force {
        params = params.force();
    }
    let out = api(server)
        .patch(&name, &params, &Patch::Apply(obj))
        .await?;
    Ok(serde_json::to_value(out).expect("json"))
}

fn api_error(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => (0, String::new(), other.to_string()),
    }
}

fn is_rfc3339_seconds(t: &Value) -> bool {
    let t = t.as_str().unwrap_or_default();
    t.len() == 20 && t.ends_with('Z') && t.parse::<jiff::Timestamp>().is_ok()
}

/// Docs, "Server-Side Apply": "Field management" (every applied field is owned by the
/// manager, recorded in `managedFields` with `operation: Apply` and `fieldsType: FieldsV1`)
/// and "Comparison with Client Side Apply" (an apply of an object that does not exist
/// creates it: 201).
#[tokio::test]
async fn apply_creates_the_object_and_owns_the_applied_fields() {
    let server = common::server().await;
    let mut obj = cm("settings", json!({"a": "1", "b": "2"}));
    obj["metadata"]["labels"] = json!({"app": "web"});
    let created = kube_apply(&server, "deployer", false, obj.clone())
        .await
        .expect("apply creates");
    assert_eq!(created["data"]["a"], "1");
    let entries = created["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .clone();
    assert_eq!(entries.len(), 1, "{entries:?}");
    let e = &entries[0];
    assert_eq!(e["manager"], "deployer");
    assert_eq!(e["operation"], "Apply");
    assert_eq!(e["apiVersion"], "v1");
    assert_eq!(e["fieldsType"], "FieldsV1");
    assert!(e.get("subresource").is_none());
    assert!(is_rfc3339_seconds(&e["time"]), "{e}");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:data": {"f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {"f:app": {}}}})
    );
    // Over HTTP the creation answers 201, a later apply 200; the same apply again changes
    // nothing (no new resourceVersion).
    let r = apply_raw(
        &server,
        &format!("{CMS}/other"),
        "fieldManager=deployer",
        &cm("other", json!({})).to_string(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let again = apply_raw(
        &server,
        &format!("{CMS}/settings"),
        "fieldManager=deployer",
        &obj.to_string(),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    assert_eq!(
        again.json()["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    assert_eq!(
        again.json()["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Conflicts" (applying a different value to a field another
/// manager owns is a 409 naming the field and its manager; nothing is written). Wording:
/// apimachinery `NewConflictError` (`Apply failed with N conflict(s)`, causes of type
/// `FieldManagerConflict`).
#[tokio::test]
async fn a_conflicting_apply_is_refused_with_each_field_and_owner() {
    let server = common::server().await;
    kube_apply(
        &server,
        "first",
        false,
        cm("c", json!({"a": "1", "b": "1", "c": "1"})),
    )
    .await
    .expect("first apply");
    let before = get(&server, "c").await.json();
    let err = kube_apply(&server, "second", false, cm("c", json!({"a": "2"})))
        .await
        .expect_err("conflict");
    assert_eq!(
        api_error(err),
        (
            409,
            "Conflict".to_string(),
            "Apply failed with 1 conflict: conflict with \"first\": .data.a".to_string()
        )
    );
    let r = apply_raw(
        &server,
        &format!("{CMS}/c"),
        "fieldManager=second",
        &cm("c", json!({"a": "2", "b": "2", "c": "1"})).to_string(),
    )
    .await;
    assert_eq!(r.status, 409);
    let status = r.json();
    assert_eq!(status["reason"], "Conflict");
    assert_eq!(
        status["message"],
        "Apply failed with 2 conflicts: conflicts with \"first\":\n- .data.a\n- .data.b"
    );
    assert_eq!(
        status["details"]["causes"],
        json!([
            {"reason": "FieldManagerConflict", "message": "conflict with \"first\"", "field": ".data.a"},
            {"reason": "FieldManagerConflict", "message": "conflict with \"first\"", "field": ".data.b"},
        ])
    );
    assert_eq!(get(&server, "c").await.json(), before, "nothing written");
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Conflicts" ("overwrite the value, become the sole manager":
/// `force=true` takes the field, which leaves the other manager's set) and "Field
/// management" (applying the same value as another manager shares the field: no conflict,
/// both own it).
#[tokio::test]
async fn force_takes_fields_and_equal_values_are_shared() {
    let server = common::server().await;
    kube_apply(
        &server,
        "first",
        false,
        cm("c", json!({"a": "1", "b": "1"})),
    )
    .await
    .expect("first");
    let shared = kube_apply(&server, "second", false, cm("c", json!({"b": "1"})))
        .await
        .expect("same value: no conflict");
    assert_eq!(
        owned(&shared, "first", "Apply"),
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );
    assert_eq!(
        owned(&shared, "second", "Apply"),
        json!({"f:data": {"f:b": {}}})
    );
    let forced = kube_apply(
        &server,
        "second",
        true,
        cm("c", json!({"a": "2", "b": "1"})),
    )
    .await
    .expect("forced");
    assert_eq!(forced["data"], json!({"a": "2", "b": "1"}));
    assert_eq!(
        owned(&forced, "first", "Apply"),
        json!({"f:data": {"f:b": {}}})
    );
    assert_eq!(
        owned(&forced, "second", "Apply"),
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );
    // Forcing away every field a manager had removes its entry.
    let all = kube_apply(
        &server,
        "second",
        true,
        cm("c", json!({"a": "3", "b": "3"})),
    )
    .await
    .expect("forced again");
    assert_eq!(
        owners(&all),
        vec![("second".to_string(), "Apply".to_string())]
    );
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Merge strategy" / "Using Server-Side Apply in a controller"
/// (a field the manager applied before and leaves out of its new configuration is removed,
/// unless another manager owns it).
#[tokio::test]
async fn fields_no_longer_applied_are_removed_unless_someone_else_owns_them() {
    let server = common::server().await;
    kube_apply(
        &server,
        "first",
        false,
        cm("c", json!({"a": "1", "b": "1", "c": "1"})),
    )
    .await
    .expect("first");
    kube_apply(&server, "second", false, cm("c", json!({"b": "1"})))
        .await
        .expect("second shares b");
    // An update (merge patch) by another manager takes c.
    let patch = json!({"data": {"c": "edited"}}).to_string();
    let r = common::raw(
        &server,
        "PATCH",
        &format!("{CMS}/c?fieldManager=editor"),
        &[("Content-Type", "application/merge-patch+json")],
        patch.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let bare = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
    let after = kube_apply(&server, "first", false, bare.clone())
        .await
        .expect("first applies nothing");
    assert_eq!(
        after["data"],
        json!({"b": "1", "c": "edited"}),
        "a removed; b, c kept"
    );
    assert!(
        entry(&after, "first", "Apply").is_none(),
        "first owns nothing: no entry"
    );
    let dropped = kube_apply(&server, "second", false, bare)
        .await
        .expect("second applies nothing");
    assert_eq!(dropped["data"], json!({"c": "edited"}));
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Field management" (non-apply writes record `Update`
/// ownership of the fields they change, taking them from appliers: a later apply of another
/// value then conflicts with the updater, named with its version).
#[tokio::test]
async fn updates_take_fields_from_appliers() {
    let server = common::server().await;
    kube_apply(
        &server,
        "first",
        false,
        cm("c", json!({"a": "1", "b": "1"})),
    )
    .await
    .expect("first");
    let patch = json!({"data": {"a": "2"}}).to_string();
    let r = common::raw(
        &server,
        "PATCH",
        &format!("{CMS}/c?fieldManager=editor"),
        &[("Content-Type", "application/merge-patch+json")],
        patch.as_bytes(),
    )
    .await;
    let obj = r.json();
    assert_eq!(
        owned(&obj, "first", "Apply"),
        json!({"f:data": {"f:b": {}}})
    );
    let e = entry(&obj, "editor", "Update").expect("update entry");
    assert_eq!(e["apiVersion"], "v1");
    assert_eq!(e["fieldsV1"], json!({"f:data": {"f:a": {}}}));
    let err = kube_apply(
        &server,
        "first",
        false,
        cm("c", json!({"a": "1", "b": "1"})),
    )
    .await
    .expect_err("conflict with the updater");
    assert_eq!(
        api_error(err).2,
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.a"
    );
    server.shutdown().await;
}

/// Docs, "Server-Side Apply" / API concepts "Dry-run": `dryRun=All` answers with the
/// object that would result (its `managedFields` included) and stores nothing.
#[tokio::test]
async fn dry_run_apply_answers_without_storing() {
    let server = common::server().await;
    let r = apply_raw(
        &server,
        &format!("{CMS}/c"),
        "fieldManager=m&dryRun=All",
        &cm("c", json!({"a": "1"})).to_string(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        owned(&r.json(), "m", "Apply"),
        json!({"f:data": {"f:a": {}}})
    );
    assert_eq!(get(&server, "c").await.status, 404);
    kube_apply(&server, "m", false, cm("c", json!({"a": "1"})))
        .await
        .expect("apply");
    let before = get(&server, "c").await.json();
    let r = apply_raw(
        &server,
        &format!("{CMS}/c"),
        "fieldManager=other&dryRun=All&force=true",
        &cm("c", json!({"a": "2"})).to_string(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["data"]["a"], "2");
    assert!(entry(&r.json(), "other", "Apply").is_some());
    assert_eq!(get(&server, "c").await.json(), before);
    server.shutdown().await;
}
