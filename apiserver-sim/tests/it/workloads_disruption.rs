//! The workload simulator's disruption controller: a PodDisruptionBudget's status follows
//! its pods, so evictions (`kubectl drain`) go through one at a time as the budget allows,
//! replacements restoring it.

use serde_json::{Value, json};
use testkit::eventually_some;

use super::workloads::DEADLINE;
use crate::common;

const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];

fn budget(server: &apiserver_sim::ApiServer) -> Option<Value> {
    server
        .objects("policy", "poddisruptionbudgets")
        .into_iter()
        .find(|o| o["metadata"]["name"] == "web")
}

async fn evict(server: &apiserver_sim::ApiServer, pod: &str) -> u16 {
    let body = json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": pod}});
    let path = format!("/api/v1/namespaces/default/pods/{pod}/eviction");
    common::raw(server, "POST", &path, &JSON, body.to_string().as_bytes())
        .await
        .status
}

/// Waits until the budget allows `allowed` disruptions with `healthy` healthy pods.
async fn budget_at(server: &apiserver_sim::ApiServer, allowed: i64, healthy: i64) -> Value {
    eventually_some(
        &format!("budget allows {allowed} with {healthy} healthy"),
        DEADLINE,
        || {
            let b = budget(server).filter(|b| {
                b["status"]["disruptionsAllowed"] == allowed
                    && b["status"]["currentHealthy"] == healthy
                    && b["status"]["observedGeneration"] == b["metadata"]["generation"]
            });
            std::future::ready(b)
        },
    )
    .await
}

#[tokio::test]
async fn evictions_go_as_the_budget_allows() {
    // Pods start a second after they are bound: the two evictions below come well before a
    // replacement is ready.
    let server = apiserver_sim::ApiServer::builder()
        .workload_simulator(std::time::Duration::from_secs(1))
        .start()
        .await
        .expect("server starts");
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let r = common::raw(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        &JSON,
        deployment.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web"},
        "spec": {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}});
    let r = common::raw(
        &server,
        "POST",
        "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
        &JSON,
        pdb.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let b = budget_at(&server, 1, 2).await;
    assert_eq!(
        (
            b["status"]["expectedPods"].clone(),
            b["status"]["desiredHealthy"].clone()
        ),
        (json!(2), json!(1))
    );
    assert_eq!(b["status"]["conditions"][0]["reason"], "SufficientPods");
    let pods: Vec<String> = server
        .objects("", "pods")
        .iter()
        .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(pods.len(), 2);
    assert_eq!(evict(&server, &pods[0]).await, 201);
    // The budget is spent until a replacement is ready.
    assert_eq!(evict(&server, &pods[1]).await, 429);
    budget_at(&server, 1, 2).await;
    assert_eq!(evict(&server, &pods[1]).await, 201);
    server.shutdown().await;
}
