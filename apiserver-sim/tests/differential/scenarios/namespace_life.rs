//! A namespace through kube-controller-manager: what a new namespace is given (its `default`
//! ServiceAccount and `kube-root-ca.crt` ConfigMap, made again when deleted or changed), and its
//! deletion to its end: the content removed, a finalizer holding the namespace (its conditions
//! say why), then the namespace gone once the finalizer is released.

use serde_json::{Value, json};

use super::summary::{conditions, items};
use crate::ctx::{Ctx, MERGE};

/// How long a probe waits for the controller-manager.
const WAIT: u64 = 60;

fn root_ca(v: &Value) -> Value {
    let ca = v["data"]["ca.crt"].as_str().unwrap_or_default();
    let keys: Vec<&String> = v["data"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    let managers: Vec<&Value> = v["metadata"]["managedFields"]
        .as_array()
        .map(|m| m.iter().map(|e| &e["manager"]).collect())
        .unwrap_or_default();
    json!({"keys": keys, "pem": ca.starts_with("-----BEGIN CERTIFICATE-----"),
        "annotations": v["metadata"]["annotations"], "managers": managers})
}

fn names(list: &Value) -> Value {
    let mut names: Vec<String> = items(list)
        .iter()
        .map(|o| {
            o["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    names.sort();
    json!(names)
}

fn namespace_summary(v: &Value) -> Value {
    json!({"phase": v["status"]["phase"], "finalizers": v["spec"]["finalizers"],
        "deleting": v["metadata"]["deletionTimestamp"].is_string(), "conditions": conditions(v),
        "code": v["code"]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    let ns = ctx.ns();
    let ns_path = format!("/api/v1/namespaces/{ns}");
    let r = ctx
        .setup(
            "POST",
            "/api/v1/namespaces",
            json!({"metadata": {"name": ns}}),
        )
        .await;
    ctx.note(
        "create",
        json!({"status": r.status, "namespace": namespace_summary(&r.json())}),
    );
    // What the controller-manager gives it.
    let sa = format!("{ns_path}/serviceaccounts/default");
    let (r, ok) = ctx.poll(&sa, WAIT, |r| r.status == 200).await;
    let v = r.json();
    ctx.note(
        "serviceaccount",
        json!({"made": ok, "name": v["metadata"]["name"],
        "secrets": v["secrets"], "automount": v["automountServiceAccountToken"]}),
    );
    let cm = format!("{ns_path}/configmaps/kube-root-ca.crt");
    let (r, ok) = ctx.poll(&cm, WAIT, |r| r.status == 200).await;
    ctx.note(
        "root-ca",
        json!({"made": ok, "configmap": root_ca(&r.json())}),
    );
    let r = ctx
        .setup("GET", &format!("{ns_path}/configmaps"), Value::Null)
        .await;
    ctx.note("configmaps", names(&r.json()));
    let r = ctx
        .setup("GET", &format!("{ns_path}/serviceaccounts"), Value::Null)
        .await;
    ctx.note("serviceaccounts", names(&r.json()));
    // Made again when deleted, set back when changed.
    let old_uid = r.json()["items"][0]["metadata"]["uid"].clone();
    ctx.setup("DELETE", &sa, Value::Null).await;
    let (r, ok) = ctx
        .poll(&sa, WAIT, |r| {
            r.status == 200 && r.json()["metadata"]["uid"] != old_uid
        })
        .await;
    ctx.note(
        "serviceaccount-deleted",
        json!({"made-again": ok, "name": r.json()["metadata"]["name"]}),
    );
    let change = json!({"data": {"ca.crt": "changed"}}).to_string();
    let r = ctx
        .send(
            "PATCH",
            &cm,
            &[("Content-Type", MERGE)],
            change.into_bytes(),
        )
        .await;
    ctx.note("root-ca-changed/patch", json!(r.status));
    let (r, ok) = ctx
        .poll(&cm, WAIT, |r| {
            r.json()["data"]["ca.crt"]
                .as_str()
                .is_some_and(|c| c != "changed")
        })
        .await;
    ctx.note(
        "root-ca-changed",
        json!({"set-back": ok, "configmap": root_ca(&r.json())}),
    );
    ctx.setup("DELETE", &cm, Value::Null).await;
    let (r, ok) = ctx.poll(&cm, WAIT, |r| r.status == 200).await;
    ctx.note(
        "root-ca-deleted",
        json!({"made-again": ok, "configmap": root_ca(&r.json())}),
    );
    // Deletion: content removed, a finalizer holds the namespace until released.
    let cms = format!("{ns_path}/configmaps");
    ctx.setup("POST", &cms, json!({"metadata": {"name": "plain"}}))
        .await;
    let held = json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}});
    ctx.setup("POST", &cms, held).await;
    let secrets = format!("{ns_path}/secrets");
    ctx.setup(
        "POST",
        &secrets,
        json!({"metadata": {"name": "s"}, "stringData": {"a": "b"}}),
    )
    .await;
    let r = ctx.setup("DELETE", &ns_path, Value::Null).await;
    ctx.note(
        "delete",
        json!({"status": r.status, "namespace": namespace_summary(&r.json())}),
    );
    let (r, ok) = ctx
        .poll(&ns_path, WAIT, |r| {
            r.json()["status"]["conditions"]
                .as_array()
                .is_some_and(|cs| {
                    cs.iter().any(|c| {
                        c["type"] == "NamespaceFinalizersRemaining" && c["status"] == "True"
                    })
                })
        })
        .await;
    ctx.note(
        "held",
        json!({"reached": ok, "namespace": namespace_summary(&r.json())}),
    );
    let (r, ok) = ctx
        .poll(&cms, WAIT, |r| {
            items(&r.json())
                .iter()
                .all(|c| c["metadata"]["name"] == "held")
        })
        .await;
    ctx.note(
        "held/configmaps",
        json!({"reached": ok, "names": names(&r.json())}),
    );
    let r = ctx.setup("GET", &secrets, Value::Null).await;
    ctx.note("held/secrets", names(&r.json()));
    let r = ctx.setup("GET", &format!("{cms}/held"), Value::Null).await;
    let held = r.json();
    ctx.note(
        "held/configmap",
        json!({"deleting": held["metadata"]["deletionTimestamp"].is_string(),
        "finalizers": held["metadata"]["finalizers"]}),
    );
    let release = json!({"metadata": {"finalizers": null}}).to_string();
    ctx.send(
        "PATCH",
        &format!("{cms}/held"),
        &[("Content-Type", MERGE)],
        release.into_bytes(),
    )
    .await;
    let (r, ok) = ctx.poll(&ns_path, WAIT, |r| r.status == 404).await;
    ctx.note(
        "released",
        json!({"gone": ok, "status": r.status, "reason": r.json()["reason"]}),
    );
}
