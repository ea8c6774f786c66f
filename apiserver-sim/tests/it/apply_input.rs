//! What a server-side apply body may be: YAML text as kubectl sends it, bad input refused with
//! kube-apiserver's answers, and kubectl's last-applied annotation taken over.
//!
//! Sources: the wording of errors is kube-apiserver's (apimachinery
//! `managedfields/internal/versioncheck.go`, `structuredmerge.go`, `lastappliedmanager.go`,
//! `lastappliedupdater.go`; apiserver `endpoints/handlers/patch.go`; `ValidatePatchOptions`).

use crate::apply::{CMS, apply_raw, cm, owned};
use crate::common;

use serde_json::{Value, json};

/// kubectl sends apply bodies as YAML text (`application/apply-patch+yaml`); JSON is YAML too.
#[tokio::test]
async fn yaml_bodies_are_applied() {
    let server = common::server().await;
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: 'y'\n  labels:\n    tier: db\ndata:\n  port: \"5432\"\n";
    let r = apply_raw(&server, &format!("{CMS}/y"), "fieldManager=kubectl", yaml).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let obj = r.json();
    assert_eq!(obj["data"]["port"], "5432");
    assert_eq!(obj["metadata"]["labels"]["tier"], "db");
    assert_eq!(
        owned(&obj, "kubectl", "Apply"),
        json!({"f:data": {"f:port": {}}, "f:metadata": {"f:labels": {"f:tier": {}}}})
    );
    // Read as YAML 1.1, as upstream reads it: a bare `y` is `true`, which no name can be.
    let bare = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n";
    let r = apply_raw(&server, &format!("{CMS}/y"), "fieldManager=kubectl", bare).await;
    assert_eq!(r.status, 500, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "failed to create typed patch object (/; /v1, Kind=ConfigMap): .metadata.name: expected string, got &value.valueUnstructured{Value:true}"
    );
    server.shutdown().await;
}

/// Bad applies get kube-apiserver's answers and store nothing: no `fieldManager` (422,
/// `ValidatePatchOptions`), `force` on another patch type (422), a type other than the
/// endpoint's (400 `invalid object type`, `versioncheck.go`), `managedFields` in the
/// configuration (400, `structuredmerge.go`), a body that is not an object (400 `error
/// decoding patch`, `patch.go`), a missing or different name (400, `checkName`), an
/// unknown patch type (415).
#[tokio::test]
async fn bad_applies_are_refused_and_store_nothing() {
    let server = common::server().await;
    let path = format!("{CMS}/c");
    let ok = cm("c", json!({"a": "1"})).to_string();
    let r = apply_raw(&server, &path, "", &ok).await;
    assert_eq!(r.status, 422);
    assert_eq!(
        r.json()["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch"
    );
    assert_eq!(
        r.json()["details"]["causes"][0]["reason"],
        "FieldValueRequired"
    );
    let r = common::raw(
        &server,
        "PATCH",
        &format!("{path}?force=true"),
        &[("Content-Type", "application/merge-patch+json")],
        b"{}",
    )
    .await;
    assert_eq!(r.status, 422);
    let cases: Vec<(Value, u16, &str)> = vec![
        (
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}}),
            400,
            "invalid object type: /v1, Kind=Secret",
        ),
        (
            json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            400,
            "invalid object type: apps/v1, Kind=ConfigMap",
        ),
        (
            json!({"metadata": {"name": "c"}}),
            400,
            "invalid object type: /, Kind=",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "managedFields": []}}),
            400,
            "metadata.managedFields must be nil",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}),
            400,
            "the name of the object (c based on URL) was undeterminable: name must be provided",
        ),
        (
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}),
            400,
            "the name of the object (d) does not match the name on the URL (c)",
        ),
    ];
    for (body, code, message) in cases {
        let r = apply_raw(&server, &path, "fieldManager=m", &body.to_string()).await;
        assert_eq!(r.status, code, "{body}: {}", r.body);
        assert_eq!(r.json()["message"], message, "{body}");
        assert_eq!(r.json()["reason"], "BadRequest");
    }
    for body in ["[1, 2]", "key: [unclosed", "\"text\""] {
        let r = apply_raw(&server, &path, "fieldManager=m", body).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        let message = r.json()["message"].as_str().unwrap_or_default().to_string();
        // Upstream reads the body as YAML and words its errors so.
        assert!(message.starts_with("error decoding YAML: "), "{message}");
    }
    for ct in [
        "application/apply-patch+cbor",
        "application/apply-patch+json",
    ] {
        let target = format!("{path}?fieldManager=m");
        let r = common::raw(
            &server,
            "PATCH",
            &target,
            &[("Content-Type", ct)],
            ok.as_bytes(),
        )
        .await;
        assert_eq!(r.status, 415, "{ct}");
    }
    let list = common::raw(&server, "GET", CMS, &[], b"").await.json();
    assert_eq!(list["items"], json!([]), "nothing stored");
    server.shutdown().await;
}

/// apimachinery `lastappliedmanager.go` / `lastappliedupdater.go` (docs, "Server-Side
/// Apply": "Upgrading from client-side apply to server-side apply"): for the `kubectl`
/// manager only, fields the last-applied annotation holds (with the live value) do not
/// conflict, and the annotation is rewritten to the applied configuration.
#[tokio::test]
async fn kubectl_takes_over_what_its_last_applied_annotation_holds() {
    let server = common::server().await;
    let mut obj = cm("c", json!({"key": "v1"}));
    let last = format!("{}\n", obj);
    obj["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/last-applied-configuration": last});
    let r = common::raw(
        &server,
        "POST",
        &format!("{CMS}?fieldManager=kubectl-client-side-apply"),
        &[("Content-Type", "application/json")],
        obj.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    // Someone else changes a field the annotation does not hold.
    let patch = json!({"data": {"extra": "x"}}).to_string();
    common::raw(
        &server,
        "PATCH",
        &format!("{CMS}/c?fieldManager=editor"),
        &[("Content-Type", "application/merge-patch+json")],
        patch.as_bytes(),
    )
    .await;
    let path = format!("{CMS}/c");
    let changed = cm("c", json!({"key": "v2"})).to_string();
    let r = apply_raw(&server, &path, "fieldManager=other", &changed).await;
    assert_eq!(r.status, 409, "another manager conflicts: {}", r.body);
    let with_extra = cm("c", json!({"key": "v2", "extra": "y"})).to_string();
    let r = apply_raw(&server, &path, "fieldManager=kubectl", &with_extra).await;
    assert_eq!(
        r.json()["message"],
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.extra",
        "only the field the annotation does not hold conflicts"
    );
    let r = apply_raw(&server, &path, "fieldManager=kubectl", &changed).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let obj = r.json();
    assert_eq!(obj["data"]["key"], "v2");
    assert_eq!(
        owned(&obj, "kubectl", "Apply"),
        json!({"f:data": {"f:key": {}}})
    );
    let text = obj["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(text, format!("{changed}\n"));
    server.shutdown().await;
}
