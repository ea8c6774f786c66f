//! Server-side apply: create by apply, `managedFields` of appliers and updaters, conflicts
//! and their messages, force, shared ownership, removal of fields no longer applied, no-op
//! applies, dry runs, apply on a Deployment's lists (merge keys), bad applies.

use serde_json::{Value, json};

use crate::ctx::{APPLY, Ctx, MERGE};

fn cm(name: &str, data: Value) -> String {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
        .to_string()
}

/// An object's managedFields entries but those of the controller-manager (on a cluster the
/// deployment controller writes a Deployment's status whenever its sync comes).
fn own_entries(v: &Value) -> Value {
    let entries = v["metadata"]["managedFields"].as_array().map(|es| {
        es.iter()
            .filter(|e| e["manager"] != "kube-controller-manager")
            .cloned()
            .collect::<Vec<_>>()
    });
    json!(entries)
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let a = format!("/api/v1/namespaces/{ns}/configmaps/a");
    ctx.req_ct(
        "create",
        "PATCH",
        &format!("{a}?fieldManager=alice"),
        APPLY,
        &cm("a", json!({"x": "1", "y": "2"})),
    )
    .await;
    ctx.req_ct(
        "same-again",
        "PATCH",
        &format!("{a}?fieldManager=alice"),
        APPLY,
        &cm("a", json!({"x": "1", "y": "2"})),
    )
    .await;
    ctx.req_ct(
        "conflict",
        "PATCH",
        &format!("{a}?fieldManager=bob"),
        APPLY,
        &cm("a", json!({"x": "9"})),
    )
    .await;
    ctx.req_ct(
        "shared",
        "PATCH",
        &format!("{a}?fieldManager=bob"),
        APPLY,
        &cm("a", json!({"y": "2", "z": "3"})),
    )
    .await;
    ctx.req_ct(
        "force",
        "PATCH",
        &format!("{a}?fieldManager=bob&force=true"),
        APPLY,
        &cm("a", json!({"x": "9", "y": "2", "z": "3"})),
    )
    .await;
    ctx.req_ct(
        "remove-unapplied",
        "PATCH",
        &format!("{a}?fieldManager=alice"),
        APPLY,
        &cm("a", json!({})),
    )
    .await;
    ctx.req_ct(
        "update-takes-field",
        "PATCH",
        &format!("{a}?fieldManager=carol"),
        MERGE,
        r#"{"data":{"z":"4"}}"#,
    )
    .await;
    ctx.req_ct(
        "conflict-with-updater",
        "PATCH",
        &format!("{a}?fieldManager=bob"),
        APPLY,
        &cm("a", json!({"x": "9", "y": "2", "z": "5"})),
    )
    .await;
    ctx.req_ct(
        "dry-run",
        "PATCH",
        &format!("{a}?fieldManager=dave&dryRun=All"),
        APPLY,
        &cm("a", json!({"w": "1"})),
    )
    .await;
    ctx.req_ct(
        "yaml-body",
        "PATCH",
        &format!("/api/v1/namespaces/{ns}/configmaps/y?fieldManager=eve"),
        APPLY,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n",
    )
    .await;
    ctx.req_ct("no-field-manager", "PATCH", &a, APPLY, &cm("a", json!({})))
        .await;
    ctx.req_ct(
        "name-mismatch",
        "PATCH",
        &format!("{a}?fieldManager=alice"),
        APPLY,
        &cm("b", json!({})),
    )
    .await;
    ctx.req_ct(
        "kind-mismatch",
        "PATCH",
        &format!("{a}?fieldManager=alice"),
        APPLY,
        &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}}).to_string(),
    )
    .await;
    ctx.req_ct(
        "not-an-object",
        "PATCH",
        &format!("{a}?fieldManager=alice"),
        APPLY,
        "[1, 2]",
    )
    .await;
    ctx.req_ct(
        "force-on-merge-patch",
        "PATCH",
        &format!("{a}?fieldManager=alice&force=true"),
        MERGE,
        "{}",
    )
    .await;
    ctx.req_ct(
        "managed-fields-in-body",
        "PATCH",
        &format!("{a}?fieldManager=alice"),
        APPLY,
        &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
            "managedFields": [{"manager": "m", "operation": "Apply"}]}})
        .to_string(),
    )
    .await;
    // A Deployment: containers merged by name, ports by containerPort and protocol.
    let d = format!("/apis/apps/v1/namespaces/{ns}/deployments/web");
    let dep = |image: &str, port: i64| {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
            {"name": "main", "image": image, "ports": [{"containerPort": port}]}]}}}})
        .to_string()
    };
    let r = ctx
        .send(
            "PATCH",
            &format!("{d}?fieldManager=alice"),
            &[("Content-Type", APPLY)],
            dep("nginx:1", 80).into_bytes(),
        )
        .await;
    ctx.note("deployment-managed-fields", own_entries(&r.json()));
    let sidecar =
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}})
        .to_string();
    let r = ctx
        .send(
            "PATCH",
            &format!("{d}?fieldManager=bob"),
            &[("Content-Type", APPLY)],
            sidecar.into_bytes(),
        )
        .await;
    ctx.note(
        "deployment-second-container",
        json!({"status": r.status,
        "containers": r.json()["spec"]["template"]["spec"]["containers"],
        "managers": own_entries(&r.json())}),
    );
    let r = ctx
        .send(
            "PATCH",
            &format!("{d}?fieldManager=carol"),
            &[("Content-Type", APPLY)],
            dep("nginx:2", 80).into_bytes(),
        )
        .await;
    ctx.record("deployment-image-conflict", &r);
    let r = ctx
        .send(
            "PATCH",
            &format!("{d}?fieldManager=alice"),
            &[("Content-Type", APPLY)],
            dep("nginx:1", 8080).into_bytes(),
        )
        .await;
    ctx.note(
        "deployment-port-change",
        json!({"status": r.status,
        "containers": r.json()["spec"]["template"]["spec"]["containers"]}),
    );
    let r = ctx
        .send(
            "PATCH",
            &format!("{d}/status?fieldManager=ctl"),
            &[("Content-Type", APPLY)],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "status": {"replicas": 1}})
            .to_string()
            .into_bytes(),
        )
        .await;
    ctx.note(
        "status-apply",
        json!({"status": r.status, "replicas": r.json()["status"]["replicas"],
        "managers": own_entries(&r.json())}),
    );
    // The default manager comes from the User-Agent.
    let r = ctx
        .send(
            "POST",
            &format!("/api/v1/namespaces/{ns}/configmaps"),
            &[("Content-Type", "application/json")],
            br#"{"metadata":{"name":"ua"}}"#.to_vec(),
        )
        .await;
    ctx.note(
        "manager-from-user-agent",
        r.json()["metadata"]["managedFields"].clone(),
    );
}
