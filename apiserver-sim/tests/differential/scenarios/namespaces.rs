//! Namespace deletion on a cluster: the DELETE answer (the namespace, now Terminating); once
//! the namespace controller has deleted its content, which a ConfigMap's finalizer holds, the
//! Terminating namespace with its `kubernetes` finalizer, creations in it refused, updates of
//! the held object still allowed, a second DELETE; the namespace gone once the object is
//! released (end states awaited to a deadline); and namespace creation errors.

use serde_json::{Value, json};

use crate::ctx::Ctx;

fn ns_summary(v: &Value) -> Value {
    json!({"kind": v["kind"], "phase": v["status"]["phase"], "finalizers": v["spec"]["finalizers"],
           "deleting": v["metadata"]["deletionTimestamp"].is_string(), "labels": v["metadata"]["labels"],
           "code": v["code"], "message": v["message"], "reason": v["reason"]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    let ns = ctx.ns();
    let r = ctx
        .setup(
            "POST",
            "/api/v1/namespaces",
            json!({"metadata": {"name": ns}}),
        )
        .await;
    ctx.note(
        "create",
        json!({"status": r.status, "ns": ns_summary(&r.json())}),
    );
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    ctx.setup(
        "POST",
        &cms,
        json!({"metadata": {"name": "c", "finalizers": ["example.com/hold"]}}),
    )
    .await;
    let r = ctx
        .setup("DELETE", &format!("/api/v1/namespaces/{ns}"), Value::Null)
        .await;
    ctx.note(
        "delete",
        json!({"status": r.status, "ns": ns_summary(&r.json())}),
    );
    // The namespace controller deletes the content: the held ConfigMap is being deleted.
    let (_, held) = ctx
        .poll(&format!("{cms}/c"), 60, |r| {
            r.json()["metadata"]["deletionTimestamp"].is_string()
        })
        .await;
    ctx.note("content-deleted", json!(held));
    let r = ctx
        .setup("GET", &format!("/api/v1/namespaces/{ns}"), Value::Null)
        .await;
    ctx.note(
        "terminating",
        json!({"status": r.status, "ns": ns_summary(&r.json())}),
    );
    ctx.req(
        "create-in-terminating",
        "POST",
        &cms,
        json!({"metadata": {"name": "d"}}),
    )
    .await;
    let r = ctx
        .send(
            "PATCH",
            &format!("{cms}/c"),
            &[("Content-Type", crate::ctx::MERGE)],
            br#"{"data":{"a":"b"}}"#.to_vec(),
        )
        .await;
    ctx.note("update-in-terminating", json!(r.status));
    let r = ctx
        .setup("DELETE", &format!("/api/v1/namespaces/{ns}"), Value::Null)
        .await;
    ctx.note(
        "delete-again",
        json!({"status": r.status, "ns": ns_summary(&r.json())}),
    );
    ctx.req(
        "create-reserved",
        "POST",
        "/api/v1/namespaces",
        json!({"metadata": {"name": "Invalid_Name"}}),
    )
    .await;
    ctx.req(
        "create-existing",
        "POST",
        "/api/v1/namespaces",
        json!({"metadata": {"name": "default"}}),
    )
    .await;
    ctx.req(
        "delete-default",
        "DELETE",
        "/api/v1/namespaces/default",
        Value::Null,
    )
    .await;
    ctx.req(
        "delete-kube-system",
        "DELETE",
        "/api/v1/namespaces/kube-system",
        Value::Null,
    )
    .await;
    // Release the held object: the namespace controller finalizes the namespace.
    ctx.setup(
        "PATCH",
        &format!("{cms}/c"),
        json!({"metadata": {"finalizers": null}}),
    )
    .await;
    let (r, gone) = ctx
        .poll(&format!("/api/v1/namespaces/{ns}"), 60, |r| r.status == 404)
        .await;
    ctx.note("finalized", json!({"status": r.status, "gone": gone}));
}
