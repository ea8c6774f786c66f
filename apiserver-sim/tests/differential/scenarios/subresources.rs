//! Status and scale subresources of built-in kinds: a Deployment's `/status` writes ignore
//! the spec and main writes ignore the status, generation moves with the spec only, `/scale`
//! reads and writes (with stale and invalid values), and a ConfigMap has neither. On a
//! cluster the deployment controller writes the status too: before each write the scenario
//! waits (to a deadline) until the Deployment has settled, so every answer holds the status
//! the controller settled on, not one caught mid-way.

use serde_json::{Value, json};

use crate::ctx::{Ctx, MERGE};

pub fn deployment(name: &str, replicas: i64) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27",
                    "ports": [{"containerPort": 80}]}]}}}})
}

/// Whether a Deployment has settled: its controller saw its generation, every replica is
/// updated, ready and available, and no pod is still terminating.
pub fn settled(v: &Value) -> bool {
    let want = v["spec"]["replicas"].as_i64();
    let st = &v["status"];
    v["metadata"]["generation"] == st["observedGeneration"]
        && [
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
        ]
        .iter()
        .all(|k| st[*k].as_i64() == want)
        && st["unavailableReplicas"].is_null()
        && st["terminatingReplicas"].as_i64().unwrap_or(0) == 0
}

/// Waits until the Deployment at `path` has settled; records whether it did as `id`.
pub async fn settle(ctx: &mut Ctx<'_>, id: &str, path: &str) {
    let (_, done) = ctx.poll(path, 60, |r| settled(&r.json())).await;
    ctx.note(id, json!(done));
}

/// The generation, replicas and status of a Deployment (or the error): the conditions in
/// the order of their types (the controller's order depends on how its syncs fell) and the
/// ReplicaSet's template hash in their messages replaced (the simulator hashes templates its
/// own way).
fn gen_and_status(v: &Value) -> Value {
    let mut status = v["status"].clone();
    let conditions = status
        .as_object_mut()
        .and_then(|s| s.get_mut("conditions"))
        .and_then(Value::as_array_mut);
    if let Some(cs) = conditions {
        cs.sort_by_key(|c| c["type"].to_string());
        for c in cs.iter_mut() {
            if let Some(m) = c["message"].as_str() {
                c["message"] = json!(without_hash(m));
            }
        }
    }
    json!({"generation": v["metadata"]["generation"], "replicas": v["spec"]["replicas"],
           "status": status, "code": v["code"], "message": v["message"]})
}

/// `ReplicaSet "web-<hash>" …` with the hash replaced by `HASH`.
fn without_hash(message: &str) -> String {
    match message.split_once("\"web-") {
        Some((head, tail)) => match tail.split_once('"') {
            Some((_, rest)) => format!("{head}\"web-HASH\"{rest}"),
            None => message.to_string(),
        },
        None => message.to_string(),
    }
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let deps = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    ctx.req("create-deployment", "POST", &deps, deployment("web", 2))
        .await;
    let d = format!("{deps}/web");
    settle(ctx, "settled-created", &d).await;
    let r = ctx.send("PATCH", &format!("{d}/status"), &[("Content-Type", MERGE)],
        br#"{"spec":{"replicas":7},"status":{"replicas":2,"readyReplicas":1,"observedGeneration":1}}"#.to_vec()).await;
    ctx.note(
        "status-patch",
        json!({"code": r.status, "obj": gen_and_status(&r.json())}),
    );
    settle(ctx, "settled-status-patched", &d).await;
    let r = ctx
        .send(
            "PATCH",
            &d,
            &[("Content-Type", MERGE)],
            br#"{"spec":{"replicas":3},"status":{"replicas":9}}"#.to_vec(),
        )
        .await;
    ctx.note(
        "main-patch",
        json!({"code": r.status, "obj": gen_and_status(&r.json())}),
    );
    settle(ctx, "settled-scaled-to-3", &d).await;
    let r = ctx
        .send(
            "PATCH",
            &d,
            &[("Content-Type", MERGE)],
            br#"{"metadata":{"labels":{"x":"y"}}}"#.to_vec(),
        )
        .await;
    ctx.note(
        "metadata-patch-keeps-generation",
        json!({"code": r.status, "obj": gen_and_status(&r.json())}),
    );
    ctx.get("scale", &format!("{d}/scale")).await;
    let scale = ctx
        .setup("GET", &format!("{d}/scale"), Value::Null)
        .await
        .json();
    let mut s = scale.clone();
    s["spec"]["replicas"] = json!(5);
    ctx.req("scale-put", "PUT", &format!("{d}/scale"), s.clone())
        .await;
    ctx.req("scale-put-stale", "PUT", &format!("{d}/scale"), s)
        .await;
    settle(ctx, "settled-scaled-to-5", &d).await;
    ctx.req_ct(
        "scale-patch",
        "PATCH",
        &format!("{d}/scale"),
        MERGE,
        r#"{"spec":{"replicas":4}}"#,
    )
    .await;
    ctx.req_ct(
        "scale-negative",
        "PATCH",
        &format!("{d}/scale"),
        MERGE,
        r#"{"spec":{"replicas":-1}}"#,
    )
    .await;
    settle(ctx, "settled-scaled-to-4", &d).await;
    let r = ctx.setup("GET", &d, Value::Null).await;
    ctx.note("after-scale", gen_and_status(&r.json()));
    ctx.get("scale-missing", &format!("{deps}/missing/scale"))
        .await;
    ctx.req(
        "invalid-deployment",
        "POST",
        &deps,
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "bad"}, "spec": {"selector": {"matchLabels": {"app": "a"}},
        "template": {"metadata": {"labels": {"app": "b"}}, "spec": {"containers": []}}}}),
    )
    .await;
    let rs = format!("/apis/apps/v1/namespaces/{ns}/replicasets");
    let mut r = deployment("rs", 1);
    r["kind"] = json!("ReplicaSet");
    ctx.req("create-replicaset", "POST", &rs, r).await;
    let (_, done) = ctx
        .poll(&format!("{rs}/rs"), 60, |r| {
            let v = r.json();
            v["status"]["replicas"] == 1 && v["status"]["readyReplicas"] == 1
        })
        .await;
    ctx.note("replicaset-settled", json!(done));
    ctx.get("replicaset-scale", &format!("{rs}/rs/scale")).await;
}
