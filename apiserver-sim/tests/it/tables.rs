//! `Table` responses for built-in kinds, as `kubectl get` asks for them: the columns and
//! cells a real server computes (Kubernetes `pkg/printers/internalversion/printers.go`), for
//! pods in their common states, workloads, config, services, namespaces, events, leases and
//! CRDs (the default table convertor, `k8s.io/apiserver/pkg/registry/rest/table.go`).

use crate::common;

use apiserver_sim::ApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

/// What `kubectl get` sends.
pub const TABLE_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

/// GETs `path` as a table; asserts a 200 `Table`.
pub async fn table(server: &ApiServer, path: &str) -> Value {
    let r = common::raw(server, "GET", path, &[("Accept", TABLE_ACCEPT)], b"").await;
    assert_eq!(r.status, 200, "GET {path}: {}", r.body);
    let t = r.json();
    assert_eq!(
        (t["kind"].as_str(), t["apiVersion"].as_str()),
        (Some("Table"), Some("meta.k8s.io/v1")),
        "{t}"
    );
    t
}

/// Column names of a table.
pub fn columns(t: &Value) -> Vec<String> {
    t["columnDefinitions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| c["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// Priorities of a table's columns.
pub fn priorities(t: &Value) -> Vec<i64> {
    t["columnDefinitions"]
        .as_array()
        .map(|cs| {
            cs.iter()
                .map(|c| c["priority"].as_i64().unwrap_or(-1))
                .collect()
        })
        .unwrap_or_default()
}

/// The cells of the row whose object (metadata by default) is named `name`.
pub fn cells(t: &Value, name: &str) -> Vec<Value> {
    t["rows"]
        .as_array()
        .and_then(|rows| {
            rows.iter()
                .find(|r| r["object"]["metadata"]["name"] == name)
        })
        .and_then(|r| r["cells"].as_array().cloned())
        .unwrap_or_else(|| panic!("no row {name} in {t}"))
}

/// Whether an AGE cell reads a few seconds, as for an object created by the test.
pub fn is_fresh_age(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.ends_with('s') && s[..s.len() - 1].parse::<u32>().is_ok_and(|n| n < 60))
}

fn ago(secs: i64) -> String {
    let t = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(secs);
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Creates a pod with `spec`, then writes `status` through the status subresource.
async fn pod(server: &ApiServer, name: &str, spec: Value, status: Value) {
    server
        .create_json(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"}, "spec": spec}))
        .expect("create pod");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": status})),
    )
    .await
    .expect("pod status");
}

fn one(name: &str) -> Value {
    json!({"containers": [{"name": name, "image": "nginx"}]})
}

/// Kubernetes printers.go `printPod`: READY, STATUS (phase, container reasons, init
/// containers, Terminating), RESTARTS with the last restart's age, wide IP/NODE/NOMINATED
/// NODE/READINESS GATES, and the `Completed` row condition of finished pods.
#[tokio::test]
async fn pod_columns_and_status_rules() {
    let server = common::server().await;
    let running = json!({"state": {"running": {"startedAt": ago(600)}}, "ready": true, "restartCount": 0, "name": "app", "image": "nginx", "imageID": "", "started": true});
    pod(&server, "ready", json!({"containers": [{"name": "app", "image": "nginx"}], "nodeName": "node-1",
            "readinessGates": [{"conditionType": "example.com/gate"}, {"conditionType": "example.com/other"}]}),
        json!({"phase": "Running", "podIP": "10.0.0.7", "podIPs": [{"ip": "10.0.0.7"}],
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "example.com/gate", "status": "True"}],
            "containerStatuses": [running]})).await;
    pod(&server, "creating", json!({"containers": [{"name": "app", "image": "a"}, {"name": "side", "image": "b"}]}),
        json!({"phase": "Pending", "containerStatuses": [running,
            {"name": "side", "ready": false, "restartCount": 0, "image": "b", "imageID": "", "state": {"waiting": {"reason": "ContainerCreating"}}}]})).await;
    pod(&server, "crashing", one("app"),
        json!({"phase": "Running", "containerStatuses": [{"name": "app", "ready": false, "restartCount": 5, "image": "nginx", "imageID": "",
            "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
            "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "finishedAt": ago(3 * 3600 + 30)}}}]})).await;
    pod(&server, "done", one("app"),
        json!({"phase": "Succeeded", "containerStatuses": [{"name": "app", "ready": false, "restartCount": 0, "image": "nginx", "imageID": "",
            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]})).await;
    pod(&server, "failed", one("app"),
        json!({"phase": "Failed", "containerStatuses": [{"name": "app", "ready": false, "restartCount": 0, "image": "nginx", "imageID": "",
            "state": {"terminated": {"exitCode": 2, "reason": "Error"}}}]})).await;
    pod(&server, "killed", one("app"),
        json!({"phase": "Running", "containerStatuses": [{"name": "app", "ready": false, "restartCount": 0, "image": "nginx", "imageID": "",
            "state": {"terminated": {"exitCode": 137}}}]})).await;
    let init = json!({"initContainers": [{"name": "migrate", "image": "m"}, {"name": "wait", "image": "w"}],
        "containers": [{"name": "app", "image": "nginx"}]});
    pod(&server, "initializing", init.clone(),
        json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "migrate", "ready": false, "restartCount": 0, "image": "m", "imageID": "", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
            {"name": "wait", "ready": false, "restartCount": 0, "image": "w", "imageID": "", "state": {"running": {}}}]})).await;
    pod(&server, "init-crash", init,
        json!({"phase": "Pending", "initContainerStatuses": [
            {"name": "migrate", "ready": false, "restartCount": 3, "image": "m", "imageID": "", "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]})).await;
    pod(&server, "sidecar", json!({"initContainers": [{"name": "proxy", "image": "p", "restartPolicy": "Always"}],
            "containers": [{"name": "app", "image": "nginx"}]}),
        json!({"phase": "Running", "conditions": [{"type": "Initialized", "status": "True"}, {"type": "Ready", "status": "True"}],
            "initContainerStatuses": [{"name": "proxy", "ready": true, "started": true, "restartCount": 0, "image": "p", "imageID": "", "state": {"running": {}}}],
            "containerStatuses": [running]})).await;
    server
        .create_json(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "leaving", "namespace": "default",
            "finalizers": ["example.com/hold"]}, "spec": one("app")}))
        .expect("create");
    server
        .delete("", "pods", Some("default"), "leaving")
        .expect("delete");

    let t = table(&server, "/api/v1/namespaces/default/pods").await;
    assert_eq!(
        columns(&t),
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    assert_eq!(priorities(&t), [0, 0, 0, 0, 0, 1, 1, 1, 1]);
    assert_eq!(t["columnDefinitions"][0]["format"], "name");
    assert_eq!(t["columnDefinitions"][1]["type"], "string");
    let c = cells(&t, "ready");
    assert_eq!(
        &c[..4],
        &[json!("ready"), json!("1/1"), json!("Running"), json!("0")]
    );
    assert!(is_fresh_age(&c[4]), "{c:?}");
    assert_eq!(
        &c[5..],
        &[
            json!("10.0.0.7"),
            json!("node-1"),
            json!("<none>"),
            json!("1/2")
        ]
    );
    assert_eq!(
        &cells(&t, "creating")[1..3],
        &[json!("1/2"), json!("ContainerCreating")]
    );
    assert_eq!(
        &cells(&t, "crashing")[1..4],
        &[json!("0/1"), json!("CrashLoopBackOff"), json!("5 (3h ago)")]
    );
    assert_eq!(
        &cells(&t, "done")[1..3],
        &[json!("0/1"), json!("Completed")]
    );
    assert_eq!(&cells(&t, "failed")[2], "Error");
    assert_eq!(&cells(&t, "killed")[2], "ExitCode:137");
    assert_eq!(
        &cells(&t, "initializing")[1..3],
        &[json!("0/1"), json!("Init:1/2")]
    );
    assert_eq!(
        &cells(&t, "init-crash")[2..4],
        &[json!("Init:CrashLoopBackOff"), json!("3")]
    );
    assert_eq!(
        &cells(&t, "sidecar")[1..3],
        &[json!("2/2"), json!("Running")]
    );
    assert_eq!(&cells(&t, "leaving")[2], "Terminating");
    assert_eq!(
        &cells(&t, "leaving")[5..8],
        &[json!("<none>"), json!("<none>"), json!("<none>")]
    );
    let done = t["rows"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["cells"][0] == "done"))
        .cloned();
    assert_eq!(
        done.map(|r| r["conditions"].clone()),
        Some(
            json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}])
        )
    );
}

/// printers.go `printDeployment` and `printReplicaSet`: READY as ready/desired, UP-TO-DATE,
/// AVAILABLE, and wide CONTAINERS, IMAGES, SELECTOR.
#[tokio::test]
async fn deployment_and_replicaset_columns() {
    let server = common::server().await;
    let template = json!({"metadata": {"labels": {"app": "web", "tier": "front"}}, "spec": {"containers": [
        {"name": "web", "image": "nginx:1.27"}, {"name": "log", "image": "busybox"}]}});
    server
        .create_json(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front", "edge"]}]}, "template": template}}))
        .expect("deployment");
    let deps: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    deps.patch_status(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"status":
        {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}})),
    )
    .await
    .expect("status");
    server
        .create_json(json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web-1", "namespace": "default"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template}}))
        .expect("replicaset");
    let t = table(&server, "/apis/apps/v1/namespaces/default/deployments").await;
    assert_eq!(
        columns(&t),
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    assert_eq!(priorities(&t), [0, 0, 0, 0, 0, 1, 1, 1]);
    let c = cells(&t, "web");
    assert_eq!(&c[..4], &[json!("web"), json!("2/3"), json!(3), json!(2)]);
    assert_eq!(
        &c[5..],
        &[
            json!("web,log"),
            json!("nginx:1.27,busybox"),
            json!("app=web,tier in (edge,front)")
        ]
    );
    let t = table(&server, "/apis/apps/v1/namespaces/default/replicasets").await;
    assert_eq!(
        columns(&t),
        [
            "Name",
            "Desired",
            "Current",
            "Ready",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let c = cells(&t, "web-1");
    assert_eq!(&c[..4], &[json!("web-1"), json!(2), json!(0), json!(0)]);
    assert_eq!(c[7], "app=web");
}

/// printers.go `printConfigMap` (DATA counts data and binaryData), `printSecret` (TYPE,
/// DATA), `printServiceAccount` (no SECRETS column since 1.35), `printNamespace` (STATUS).
#[tokio::test]
async fn config_and_namespace_columns() {
    let server = common::server().await;
    server
        .create_json(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"},
            "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}))
        .expect("cm");
    server
        .create_json(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls", "namespace": "default"},
            "type": "kubernetes.io/tls", "data": {"tls.crt": "QQ==", "tls.key": "Qg=="}}))
        .expect("secret");
    server
        .create_json(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot", "namespace": "default"},
            "secrets": [{"name": "bot-token"}]}))
        .expect("sa");
    let t = table(&server, "/api/v1/namespaces/default/configmaps").await;
    assert_eq!(columns(&t), ["Name", "Data", "Age"]);
    assert_eq!(&cells(&t, "cfg")[..2], &[json!("cfg"), json!(3)]);
    let t = table(&server, "/api/v1/namespaces/default/secrets").await;
    assert_eq!(columns(&t), ["Name", "Type", "Data", "Age"]);
    assert_eq!(
        &cells(&t, "tls")[..3],
        &[json!("tls"), json!("kubernetes.io/tls"), json!(2)]
    );
    let t = table(&server, "/api/v1/namespaces/default/serviceaccounts").await;
    assert_eq!(columns(&t), ["Name", "Age"]);
    assert_eq!(cells(&t, "bot")[0], "bot");
    let t = table(&server, "/api/v1/namespaces").await;
    assert_eq!(columns(&t), ["Name", "Status", "Age"]);
    assert_eq!(
        &cells(&t, "default")[..2],
        &[json!("default"), json!("Active")]
    );
}

/// printers.go `printService`: TYPE, CLUSTER-IP (first of clusterIPs), EXTERNAL-IP per type
/// (`<none>`, `<pending>` load balancer, external name), PORT(S) with node ports, wide
/// SELECTOR.
#[tokio::test]
async fn service_columns() {
    let server = common::server().await;
    let svc = |name: &str, spec: Value| json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"}, "spec": spec});
    server
        .create_json(svc("web", json!({"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"],
            "selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP", "name": "dns"}]})))
        .expect("svc");
    server
        .create_json(svc(
            "edge",
            json!({"type": "LoadBalancer", "clusterIPs": ["10.96.0.11"],
            "ports": [{"port": 443, "nodePort": 30443, "protocol": "TCP"}]}),
        ))
        .expect("svc");
    server
        .create_json(svc(
            "ext",
            json!({"type": "ExternalName", "externalName": "db.example.com"}),
        ))
        .expect("svc");
    let t = table(&server, "/api/v1/namespaces/default/services").await;
    assert_eq!(
        columns(&t),
        [
            "Name",
            "Type",
            "Cluster-IP",
            "External-IP",
            "Port(s)",
            "Age",
            "Selector"
        ]
    );
    assert_eq!(priorities(&t), [0, 0, 0, 0, 0, 0, 1]);
    let c = cells(&t, "web");
    assert_eq!(
        &c[..5],
        &[
            json!("web"),
            json!("ClusterIP"),
            json!("10.96.0.10"),
            json!("<none>"),
            json!("80/TCP,53/UDP")
        ]
    );
    assert_eq!(c[6], "app=web");
    let c = cells(&t, "edge");
    assert_eq!(
        &c[1..5],
        &[
            json!("LoadBalancer"),
            json!("10.96.0.11"),
            json!("<pending>"),
            json!("443:30443/TCP")
        ]
    );
    assert_eq!(c[6], "<none>");
    let c = cells(&t, "ext");
    assert_eq!(
        &c[1..5],
        &[
            json!("ExternalName"),
            json!("<none>"),
            json!("db.example.com"),
            json!("<none>")
        ]
    );
}

/// printers.go `printEvent`, for core/v1 and events.k8s.io/v1 events alike: LAST SEEN, TYPE,
/// REASON, OBJECT (kind/name), MESSAGE, and wide SUBOBJECT, SOURCE, FIRST SEEN, COUNT, NAME.
#[tokio::test]
async fn event_columns_for_both_versions() {
    let server = common::server().await;
    server
        .create_json(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "web.1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "web", "namespace": "default", "fieldPath": "spec.containers{app}"},
            "reason": "Pulled", "message": "  Image pulled \n", "type": "Normal", "count": 4,
            "source": {"component": "kubelet", "host": "node-1"},
            "firstTimestamp": ago(3 * 3600 + 10), "lastTimestamp": ago(15 * 60 + 2)}))
        .expect("core event");
    server
        .create_json(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "web.2", "namespace": "default"},
            "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"},
            "reason": "ScalingReplicaSet", "note": "Scaled up", "type": "Normal", "action": "Scale",
            "reportingController": "deployment-controller", "reportingInstance": "",
            "eventTime": format!("{}.000000Z", ago(3 * 3600 + 5).trim_end_matches('Z'))}))
        .expect("new event");
    let expected_columns = [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject",
        "Source",
        "Message",
        "First Seen",
        "Count",
        "Name",
    ];
    let t = table(&server, "/api/v1/namespaces/default/events").await;
    assert_eq!(columns(&t), expected_columns);
    assert_eq!(priorities(&t), [0, 0, 0, 0, 1, 1, 0, 1, 1, 1]);
    assert_eq!(
        cells(&t, "web.1"),
        [
            json!("15m"),
            json!("Normal"),
            json!("Pulled"),
            json!("pod/web"),
            json!("spec.containers{app}"),
            json!("kubelet, node-1"),
            json!("Image pulled"),
            json!("3h"),
            json!(4),
            json!("web.1")
        ]
    );
    let t = table(&server, "/apis/events.k8s.io/v1/namespaces/default/events").await;
    assert_eq!(columns(&t), expected_columns);
    assert_eq!(
        cells(&t, "web.2"),
        [
            json!("3h"),
            json!("Normal"),
            json!("ScalingReplicaSet"),
            json!("deployment/web"),
            json!(""),
            json!("deployment-controller"),
            json!("Scaled up"),
            json!("3h"),
            json!(1),
            json!("web.2")
        ]
    );
}
