//! A Job and a Pod through kube-controller-manager, the scheduler and a node, as far as a
//! hollow node reports them (its containers never exit): a suspended Job (no pods, the
//! `Suspended` condition), resumed (its pod: name, labels, finalizer, owner; the Job's counts
//! once the pod is ready); a Pod of its own, scheduled, running and ready; and their deletion.

use serde_json::{Value, json};

use super::summary::{conditions, items, pod, running as ready};
use crate::ctx::{Ctx, MERGE};

/// How long a probe waits for the cluster.
const WAIT: u64 = 90;

fn job_summary(j: &Value) -> Value {
    let s = &j["status"];
    json!({"active": s["active"], "ready": s["ready"], "terminating": s["terminating"],
        "succeeded": s["succeeded"], "failed": s["failed"],
        "uncounted": s["uncountedTerminatedPods"], "started": s["startTime"].is_string(),
        "conditions": conditions(j), "suspend": j["spec"]["suspend"],
        "selector": j["spec"]["selector"], "labels": j["spec"]["template"]["metadata"]["labels"]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let jobs = format!("/apis/batch/v1/namespaces/{ns}/jobs");
    let body = json!({"metadata": {"name": "work"}, "spec": {"suspend": true, "template": {
        "spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}});
    let r = ctx.setup("POST", &jobs, body).await;
    ctx.note(
        "create",
        json!({"status": r.status, "job": job_summary(&r.json())}),
    );
    let job = format!("{jobs}/work");
    let (r, ok) = ctx
        .poll(&job, WAIT, |r| r.json()["status"]["conditions"].is_array())
        .await;
    ctx.note(
        "suspended",
        json!({"reached": ok, "job": job_summary(&r.json())}),
    );
    let pods = format!("/api/v1/namespaces/{ns}/pods?labelSelector=job-name%3Dwork");
    let r = ctx.setup("GET", &pods, Value::Null).await;
    ctx.note("suspended/pods", json!(items(&r.json()).len()));
    let resume = json!({"spec": {"suspend": false}}).to_string();
    let r = ctx
        .send(
            "PATCH",
            &job,
            &[("Content-Type", MERGE)],
            resume.into_bytes(),
        )
        .await;
    ctx.note("resume", json!(r.status));
    let (r, ok) = ctx
        .poll(&pods, WAIT, |r| items(&r.json()).iter().any(ready))
        .await;
    let job_now = ctx.setup("GET", &job, Value::Null).await.json();
    let running: Vec<Value> = items(&r.json()).iter().map(pod).collect();
    ctx.note("running/pods", json!({"reached": ok, "pods": running}));
    ctx.note(
        "running/job",
        json!({"active": job_now["status"]["active"],
        "started": job_now["status"]["startTime"].is_string()}),
    );
    let r = ctx
        .setup(
            "DELETE",
            &format!("{job}?propagationPolicy=Foreground"),
            Value::Null,
        )
        .await;
    ctx.note(
        "delete",
        json!({"status": r.status, "finalizers": r.json()["metadata"]["finalizers"]}),
    );
    let (_, job_gone) = ctx.poll(&job, WAIT, |r| r.status == 404).await;
    let (_, pods_gone) = ctx.poll(&pods, WAIT, |r| items(&r.json()).is_empty()).await;
    ctx.note("deleted", json!({"job": job_gone, "pods": pods_gone}));
    // A Pod of its own.
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let body = json!({"metadata": {"name": "solo", "labels": {"app": "solo"}}, "spec": {
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}});
    let r = ctx.setup("POST", &pods, body).await;
    ctx.note(
        "pod/create",
        json!({"status": r.status, "pod": pod(&r.json())}),
    );
    let solo = format!("{pods}/solo");
    let (r, ok) = ctx.poll(&solo, WAIT, |r| ready(&r.json())).await;
    ctx.note("pod/running", json!({"reached": ok, "pod": pod(&r.json())}));
    let r = ctx.setup("DELETE", &solo, Value::Null).await;
    let v = r.json();
    ctx.note(
        "pod/delete",
        json!({"status": r.status, "grace": v["metadata"]["deletionGracePeriodSeconds"],
        "deleting": v["metadata"]["deletionTimestamp"].is_string()}),
    );
    let (r, ok) = ctx.poll(&solo, WAIT, |r| r.status == 404).await;
    ctx.note("pod/gone", json!({"gone": ok, "status": r.status}));
    ctx.setup("DELETE", &format!("/api/v1/namespaces/{ns}"), Value::Null)
        .await;
}
