//! A Deployment through kube-controller-manager and a node: created, scaled up and down through
//! `/scale`, rolled out to a new image, then deleted orphaning its ReplicaSets, whose deletion
//! takes their pods. At each step the probes wait for the Deployment to settle (its status
//! caught up with its generation and its pods) and record the Deployment, its ReplicaSets and
//! its pods; the pod template's hash and the pods' random suffixes are replaced.

use serde_json::{Value, json};

use super::summary::{conditions, generated, items, owner_refs, pod, replaced, running};
use crate::ctx::{Ctx, MERGE};

/// How long a step may take to settle.
const WAIT: u64 = 90;

fn deployment_summary(d: &Value) -> Value {
    let s = &d["status"];
    json!({"generation": d["metadata"]["generation"], "observed": s["observedGeneration"],
        "revision": d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "replicas": s["replicas"], "updated": s["updatedReplicas"], "ready": s["readyReplicas"],
        "available": s["availableReplicas"], "unavailable": s["unavailableReplicas"],
        "terminating": s["terminatingReplicas"], "conditions": conditions(d)})
}

fn replica_set_summary(rs: &Value) -> Value {
    let s = &rs["status"];
    json!({"name": rs["metadata"]["name"], "labels": rs["metadata"]["labels"],
        "annotations": rs["metadata"]["annotations"], "owners": owner_refs(rs),
        "replicas": rs["spec"]["replicas"], "selector": rs["spec"]["selector"],
        "status": [s["replicas"], s["fullyLabeledReplicas"], s["readyReplicas"],
            s["availableReplicas"], s["observedGeneration"]], "conditions": conditions(rs)})
}

/// Whether the Deployment's status caught up: its generation observed, `want` replicas, all
/// updated and available, none left over.
fn settled(d: &Value, want: i64) -> bool {
    let s = &d["status"];
    s["observedGeneration"] == d["metadata"]["generation"]
        && [
            &s["replicas"],
            &s["updatedReplicas"],
            &s["availableReplicas"],
        ]
        .iter()
        .all(|n| n.as_i64() == Some(want))
        && s["unavailableReplicas"].is_null()
        && s["terminatingReplicas"].as_i64().unwrap_or(0) == 0
}

/// Records the Deployment, its ReplicaSets and its pods as step `step` once it settled at
/// `want` replicas and only `want` pods remain; `hashes` collects each template's hash.
async fn step(ctx: &mut Ctx<'_>, step: &str, want: i64, hashes: &mut Vec<(String, String)>) {
    let ns = ctx.ns();
    let deploy = format!("/apis/apps/v1/namespaces/{ns}/deployments/web");
    let (r, ok) = ctx.poll(&deploy, WAIT, |r| settled(&r.json(), want)).await;
    let d = r.json();
    let pods = format!("/api/v1/namespaces/{ns}/pods?labelSelector=app%3Dweb");
    let (p, pods_ok) = ctx
        .poll(&pods, WAIT, |r| {
            let ps = items(&r.json());
            ps.len() as i64 == want && ps.iter().all(running)
        })
        .await;
    let rss = ctx
        .setup(
            "GET",
            &format!("/apis/apps/v1/namespaces/{ns}/replicasets"),
            Value::Null,
        )
        .await
        .json();
    let mut rss = items(&rss);
    rss.sort_by_key(|rs| {
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"].to_string()
    });
    for rs in &rss {
        let hash = rs["metadata"]["labels"]["pod-template-hash"]
            .as_str()
            .unwrap_or_default();
        if !hashes.iter().any(|(h, _)| h == hash) {
            hashes.push((hash.to_string(), format!("HASH{}", hashes.len() + 1)));
        }
    }
    let mut pods: Vec<Value> = items(&p.json()).iter().map(pod).collect();
    pods.sort_by_key(|p| p.to_string());
    let rs_summaries: Vec<Value> = rss.iter().map(replica_set_summary).collect();
    let d = json!({"settled": ok, "deployment": deployment_summary(&d)});
    ctx.note(&format!("{step}/deployment"), replaced(&d, hashes));
    ctx.note(
        &format!("{step}/replicasets"),
        replaced(&json!(rs_summaries), hashes),
    );
    let pods = json!({"settled": pods_ok, "pods": pods});
    ctx.note(&format!("{step}/pods"), replaced(&pods, hashes));
}

async fn scale(ctx: &mut Ctx<'_>, id: &str, replicas: i64, hashes: &[(String, String)]) {
    let path = format!(
        "/apis/apps/v1/namespaces/{}/deployments/web/scale",
        ctx.ns()
    );
    let body = json!({"spec": {"replicas": replicas}}).to_string();
    let r = ctx
        .send(
            "PATCH",
            &path,
            &[("Content-Type", MERGE)],
            body.into_bytes(),
        )
        .await;
    let v = r.json();
    let answer =
        json!({"status": r.status, "spec": v["spec"], "selector": v["status"]["selector"]});
    ctx.note(id, replaced(&answer, hashes));
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let deploys = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    let body = json!({"metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}}}});
    let r = ctx.setup("POST", &deploys, body).await;
    ctx.note(
        "create",
        json!({"status": r.status, "deployment": deployment_summary(&r.json())}),
    );
    let mut hashes = Vec::new();
    step(ctx, "created", 2, &mut hashes).await;
    scale(ctx, "scale-up", 3, &hashes).await;
    step(ctx, "scaled-up", 3, &mut hashes).await;
    scale(ctx, "scale-down", 1, &hashes).await;
    step(ctx, "scaled-down", 1, &mut hashes).await;
    let image = json!({"spec": {"template": {"spec": {"containers":
        [{"name": "c", "image": "registry.k8s.io/pause:3.9"}]}}}});
    let r = ctx
        .send(
            "PATCH",
            &format!("{deploys}/web"),
            &[("Content-Type", crate::ctx::STRATEGIC)],
            image.to_string().into_bytes(),
        )
        .await;
    ctx.note(
        "rollout/patch",
        json!({"status": r.status, "generation": r.json()["metadata"]["generation"]}),
    );
    step(ctx, "rolled-out", 1, &mut hashes).await;
    // Deleted orphaning its ReplicaSets: they stay, without the owner reference.
    let r = ctx
        .setup(
            "DELETE",
            &format!("{deploys}/web?propagationPolicy=Orphan"),
            Value::Null,
        )
        .await;
    ctx.note(
        "orphan/delete",
        json!({"status": r.status,
        "finalizers": r.json()["metadata"]["finalizers"]}),
    );
    let (_, gone) = ctx
        .poll(&format!("{deploys}/web"), WAIT, |r| r.status == 404)
        .await;
    let rs_path = format!("/apis/apps/v1/namespaces/{ns}/replicasets");
    let (r, ok) = ctx
        .poll(&rs_path, WAIT, |r| {
            let rss = items(&r.json());
            !rss.is_empty()
                && rss
                    .iter()
                    .all(|rs| rs["metadata"]["ownerReferences"].is_null())
        })
        .await;
    let mut rss: Vec<Value> = items(&r.json()).iter().map(replica_set_summary).collect();
    rss.sort_by_key(|rs| rs["annotations"]["deployment.kubernetes.io/revision"].to_string());
    let orphans = json!({"deployment-gone": gone, "orphaned": ok, "replicasets": rss});
    ctx.note("orphan/replicasets", replaced(&orphans, &hashes));
    // Deleting the ReplicaSets (in the background) takes their pods.
    for rs in items(&r.json()) {
        let name = rs["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        ctx.setup("DELETE", &format!("{rs_path}/{name}"), Value::Null)
            .await;
    }
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    let (r, ok) = ctx.poll(&pods, WAIT, |r| items(&r.json()).is_empty()).await;
    let left: Vec<Value> = items(&r.json())
        .iter()
        .map(|p| {
            json!(generated(
                p["metadata"]["name"].as_str().unwrap_or_default()
            ))
        })
        .collect();
    ctx.note(
        "replicasets-deleted/pods",
        replaced(&json!({"gone": ok, "left": left}), &hashes),
    );
    ctx.setup("DELETE", &format!("/api/v1/namespaces/{ns}"), Value::Null)
        .await;
}
