//! A pod's action subresources (`binding`, `eviction`, `exec`, `attach`, `portforward`,
//! `proxy`) and the parts written on their own (`ephemeralcontainers`, `resize`), answered as
//! a bare kube-apiserver answers them (checked against one, kube-apiserver v1.36.2).

use serde_json::{Value, json};

use crate::common::{self, Raw};

const PODS: &str = "/api/v1/namespaces/default/pods";
const PDBS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
const JSON: [(&str, &str); 1] = [("Content-Type", "application/json")];
const MERGE: [(&str, &str); 1] = [("Content-Type", "application/merge-patch+json")];

async fn send(server: &apiserver_sim::ApiServer, method: &str, path: &str, body: Value) -> Raw {
    let bytes = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let headers: &[(&str, &str)] = if method == "PATCH" { &MERGE } else { &JSON };
    common::raw(server, method, path, headers, &bytes).await
}

fn pod(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "c", "image": "nginx",
            "resources": {"requests": {"cpu": "100m"}}}]}})
}

fn eviction(name: &str) -> Value {
    json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name}})
}

async fn running(server: &apiserver_sim::ApiServer, name: &str, labels: Value) {
    assert_eq!(
        send(server, "POST", PODS, pod(name, labels)).await.status,
        201
    );
    let status = json!({"status": {"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]}});
    let r = send(server, "PATCH", &format!("{PODS}/{name}/status"), status).await;
    assert_eq!(r.status, 200, "{}", r.body);
}

#[tokio::test]
async fn binding_assigns_a_node_once() {
    let server = common::server().await;
    send(&server, "POST", PODS, pod("p", json!({}))).await;
    let bind = |name: &str, node: &str| {
        json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
            "target": {"kind": "Node", "name": node}})
    };
    let path = format!("{PODS}/p/binding");
    let r = send(&server, "POST", &path, bind("q", "n1")).await;
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (
            400,
            json!("name in URL does not match name in Binding object")
        )
    );
    let r = send(&server, "POST", &path, bind("p", "")).await;
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (500, json!("target.name: Required value"))
    );
    assert_eq!(send(&server, "GET", &path, Value::Null).await.status, 405);
    let r = send(&server, "POST", &path, bind("p", "n1")).await;
    assert_eq!(
        (r.status, r.json()["status"].clone()),
        (201, json!("Success"))
    );
    let p = send(&server, "GET", &format!("{PODS}/p"), Value::Null)
        .await
        .json();
    assert_eq!(p["spec"]["nodeName"], "n1");
    assert_eq!(p["status"]["conditions"][0]["type"], "PodScheduled");
    assert_eq!(p["metadata"]["generation"], 1);
    let r = send(&server, "POST", &path, bind("p", "n2")).await;
    assert_eq!(r.status, 409);
    assert_eq!(
        r.json()["message"],
        "Operation cannot be fulfilled on pods/binding \"p\": pod p is already assigned to node \"n1\""
    );
    // Connections to the pod: its node does not exist (upstream names it as a pod).
    let r = send(&server, "GET", &format!("{PODS}/p/exec"), Value::Null).await;
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (404, json!("pods \"n1\" not found"))
    );
    server.shutdown().await;
}

#[tokio::test]
async fn connections_need_a_host_and_an_address() {
    let server = common::server().await;
    send(&server, "POST", PODS, pod("p", json!({}))).await;
    for sub in ["exec", "attach", "portforward"] {
        let r = send(&server, "POST", &format!("{PODS}/p/{sub}"), Value::Null).await;
        assert_eq!(
            (r.status, r.json()["message"].clone()),
            (400, json!("pod p does not have a host assigned")),
            "{sub}"
        );
        assert_eq!(
            send(&server, "PUT", &format!("{PODS}/p/{sub}"), json!({}))
                .await
                .status,
            405
        );
    }
    let r = send(&server, "GET", &format!("{PODS}/p:80/proxy"), Value::Null).await;
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (400, json!("address not allowed"))
    );
    let r = send(&server, "GET", &format!("{PODS}/p/proxy/a/b"), Value::Null).await;
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (400, json!("address not allowed"))
    );
    let r = send(&server, "GET", &format!("{PODS}/nope/exec"), Value::Null).await;
    assert_eq!(r.status, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn evictions_honour_disruption_budgets() {
    let server = common::server().await;
    // A pending pod goes at once; a dry run keeps it.
    send(&server, "POST", PODS, pod("pending", json!({"app": "web"}))).await;
    let r = send(
        &server,
        "POST",
        &format!("{PODS}/pending/eviction?dryRun=All"),
        eviction("pending"),
    )
    .await;
    assert_eq!(r.status, 201);
    assert_eq!(
        send(&server, "GET", &format!("{PODS}/pending"), Value::Null)
            .await
            .status,
        200
    );
    let r = send(
        &server,
        "POST",
        &format!("{PODS}/pending/eviction"),
        eviction("other"),
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(
        send(
            &server,
            "POST",
            &format!("{PODS}/pending/eviction"),
            eviction("pending")
        )
        .await
        .status,
        201
    );
    assert_eq!(
        send(&server, "GET", &format!("{PODS}/pending"), Value::Null)
            .await
            .status,
        404
    );

    running(&server, "a", json!({"app": "web"})).await;
    running(&server, "b", json!({"app": "web", "tier": "x"})).await;
    let pdb = |name: &str, labels: Value| {
        json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": name}, "spec": {"minAvailable": 1, "selector": {"matchLabels": labels}}})
    };
    assert_eq!(
        send(&server, "POST", PDBS, pdb("web", json!({"app": "web"})))
            .await
            .status,
        201
    );
    // Not yet processed by a disruption controller (none runs): 429, retry in 10 s.
    let r = send(
        &server,
        "POST",
        &format!("{PODS}/a/eviction"),
        eviction("a"),
    )
    .await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(r.header("Retry-After"), Some("10"));
    assert_eq!(
        r.json()["details"]["causes"][0],
        json!({"reason": "DisruptionBudget", "message": "The disruption budget web is still being processed by the server."})
    );
    let status = |allowed: i64| {
        json!({"status": {"observedGeneration": 1, "disruptionsAllowed": allowed,
        "currentHealthy": 2, "desiredHealthy": 1, "expectedPods": 2}})
    };
    send(&server, "PATCH", &format!("{PDBS}/web/status"), status(0)).await;
    let r = send(
        &server,
        "POST",
        &format!("{PODS}/a/eviction"),
        eviction("a"),
    )
    .await;
    assert_eq!(r.status, 429);
    assert_eq!(
        r.json()["details"]["causes"][0]["message"],
        "The disruption budget web needs 1 healthy pods and has 2 currently"
    );
    send(&server, "PATCH", &format!("{PDBS}/web/status"), status(1)).await;
    let r = send(
        &server,
        "POST",
        &format!("{PODS}/a/eviction"),
        eviction("a"),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        send(&server, "GET", &format!("{PODS}/a"), Value::Null)
            .await
            .status,
        404
    );
    let budget = send(&server, "GET", &format!("{PDBS}/web"), Value::Null)
        .await
        .json();
    assert_eq!(budget["status"]["disruptionsAllowed"], 0);
    assert!(budget["status"]["disruptedPods"]["a"].is_string());
    assert_eq!(
        budget["status"]["conditions"][0]["reason"],
        "InsufficientPods"
    );
    let managers: Vec<&Value> = budget["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| &m["manager"])
        .collect();
    assert!(managers.contains(&&json!("kube-apiserver")), "{managers:?}");
    // A pod two budgets select cannot be evicted.
    assert_eq!(
        send(&server, "POST", PDBS, pdb("x", json!({"tier": "x"})))
            .await
            .status,
        201
    );
    let r = send(
        &server,
        "POST",
        &format!("{PODS}/b/eviction"),
        eviction("b"),
    )
    .await;
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["message"],
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    );
    server.shutdown().await;
}

#[tokio::test]
async fn ephemeral_containers_and_resize_write_only_their_part() {
    let server = common::server().await;
    send(&server, "POST", PODS, pod("p", json!({"a": "1"}))).await;
    let r = send(
        &server,
        "PATCH",
        &format!("{PODS}/p/ephemeralcontainers"),
        json!({
        "metadata": {"labels": {"a": "2"}},
        "spec": {"ephemeralContainers": [{"name": "dbg", "image": "busybox"}]}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = r.json();
    assert_eq!(p["metadata"]["labels"]["a"], "1");
    assert_eq!(
        p["spec"]["ephemeralContainers"][0]["terminationMessagePolicy"],
        "File"
    );
    assert_eq!(p["metadata"]["generation"], 2);
    let r = send(
        &server,
        "PATCH",
        &format!("{PODS}/p/resize"),
        json!({
        "spec": {"containers": [{"name": "c", "image": "other",
            "resources": {"requests": {"cpu": "200m"}}}]}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let p = r.json();
    assert_eq!(p["spec"]["containers"][0]["image"], "nginx");
    assert_eq!(
        p["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "200m"
    );
    let subresources: Vec<&Value> = p["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m.get("subresource"))
        .collect();
    assert_eq!(
        subresources,
        [&json!("ephemeralcontainers"), &json!("resize")]
    );
    // As upstream records it, a writer owns what it asked to change even where the
    // subresource dropped the change (the label, the image).
    let entry = |sub: &str| {
        p["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["subresource"] == sub)
            .map(|m| m["fieldsV1"].clone())
            .unwrap_or_default()
    };
    assert_eq!(
        entry("ephemeralcontainers")["f:metadata"],
        json!({"f:labels": {"f:a": {}}})
    );
    assert!(
        entry("resize")["f:spec"]["f:containers"]["k:{\"name\":\"c\"}"]
            .get("f:image")
            .is_some()
    );
    assert_eq!(
        send(&server, "GET", &format!("{PODS}/p/resize"), Value::Null)
            .await
            .status,
        200
    );
    server.shutdown().await;
}

#[tokio::test]
async fn discovery_lists_what_is_served() {
    let server = common::server().await;
    let r = send(&server, "GET", "/api/v1", Value::Null).await.json();
    let names: Vec<&str> = r["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x["name"].as_str())
        .filter(|n| n.starts_with("pods/"))
        .collect();
    assert_eq!(
        names,
        [
            "pods/attach",
            "pods/binding",
            "pods/ephemeralcontainers",
            "pods/eviction",
            "pods/exec",
            "pods/log",
            "pods/portforward",
            "pods/proxy",
            "pods/resize",
            "pods/status"
        ]
    );
    server.shutdown().await;
}
