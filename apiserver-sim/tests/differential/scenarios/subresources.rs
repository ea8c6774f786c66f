//! Status and scale subresources of built-in kinds: a Deployment's `/status` writes ignore
//! the spec and main writes ignore the status, generation moves with the spec only, `/scale`
//! reads and writes (with stale and invalid values), and a ConfigMap has neither.

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

fn gen_and_status(v: &Value) -> Value {
    json!({"generation": v["metadata"]["generation"], "replicas": v["spec"]["replicas"],
           "status": v["status"], "code": v["code"], "message": v["message"]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let deps = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    ctx.req("create-deployment", "POST", &deps, deployment("web", 2))
        .await;
    let d = format!("{deps}/web");
    let r = ctx.send("PATCH", &format!("{d}/status"), &[("Content-Type", MERGE)],
        br#"{"spec":{"replicas":7},"status":{"replicas":2,"readyReplicas":1,"observedGeneration":1}}"#.to_vec()).await;
    ctx.note(
        "status-patch",
        json!({"code": r.status, "obj": gen_and_status(&r.json())}),
    );
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
    ctx.get("replicaset-scale", &format!("{rs}/rs/scale")).await;
}
