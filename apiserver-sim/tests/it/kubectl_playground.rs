//! kubectl's everyday commands work as against a cluster: the imperative generators (which
//! send protobuf bodies), `run`, `expose`, `scale`, `set image`, `label`, `rollout status`
//! (with the workload simulator on), `api-resources` and `get events`. Each command's
//! effect is checked through the server's own view. Sources: the kubectl reference
//! (`kubectl create deployment|service clusterip|job|cronjob|role|rolebinding`, `run`,
//! `expose`, `scale`, `set image`, `rollout status`, `label`, `api-resources`, `get
//! events`) and what each prints against a cluster. Skipped, with a notice, when
//! `kubectl` is not installed.

use std::time::Duration;

use crate::common::kubectl;
use apiserver_sim::ApiServer;
use serde_json::{Value, json};

/// The stored object, by group, plural and name (in any namespace).
fn object(server: &ApiServer, group: &str, plural: &str, name: &str) -> Value {
    server
        .objects(group, plural)
        .into_iter()
        .find(|o| o["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("{plural}.{group} {name} stored"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_playground() {
    let Some((server, _dir, k)) = kubectl::start(
        "the kubectl playground test",
        ApiServer::builder().workload_simulator(Duration::from_millis(100)),
    )
    .await
    else {
        return;
    };

    // Generators: protobuf bodies, stored as the JSON a JSON client would send.
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.26",
        "--replicas=2",
        "--port=80",
    ])
    .await;
    let d = object(&server, "apps", "deployments", "web");
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["selector"]["matchLabels"], json!({"app": "web"}));
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.26"
    );
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"],
        80
    );

    k.ok(&["create", "service", "clusterip", "backend", "--tcp=80:8080"])
        .await;
    let s = object(&server, "", "services", "backend");
    assert_eq!(s["spec"]["ports"][0]["port"], 80);
    assert_eq!(s["spec"]["ports"][0]["targetPort"], 8080);
    assert_eq!(s["spec"]["type"], "ClusterIP");

    k.ok(&[
        "create",
        "cronjob",
        "nightly",
        "--image=busybox",
        "--schedule=0 3 * * *",
        "--",
        "echo",
        "hi",
    ])
    .await;
    let cj = object(&server, "batch", "cronjobs", "nightly");
    assert_eq!(cj["spec"]["schedule"], "0 3 * * *");
    assert_eq!(
        cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"],
        json!(["echo", "hi"])
    );
    k.ok(&["create", "job", "once", "--image=busybox"]).await;
    assert_eq!(
        object(&server, "batch", "jobs", "once")["spec"]["template"]["spec"]["containers"][0]["image"],
        "busybox"
    );
    k.ok(&["create", "job", "from-cron", "--from=cronjob/nightly"])
        .await;
    let job = object(&server, "batch", "jobs", "from-cron");
    assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], "CronJob");

    k.ok(&[
        "create",
        "role",
        "reader",
        "--verb=get,list",
        "--resource=pods",
    ])
    .await;
    let role = object(&server, "rbac.authorization.k8s.io", "roles", "reader");
    assert_eq!(role["rules"][0]["verbs"], json!(["get", "list"]));
    assert_eq!(role["rules"][0]["resources"], json!(["pods"]));
    k.ok(&[
        "create",
        "rolebinding",
        "reader-alice",
        "--role=reader",
        "--user=alice",
    ])
    .await;
    let rb = object(
        &server,
        "rbac.authorization.k8s.io",
        "rolebindings",
        "reader-alice",
    );
    assert_eq!(rb["roleRef"]["name"], "reader");
    assert_eq!(rb["subjects"][0]["name"], "alice");

    // run, expose, label, scale, set image, rollout status.
    k.ok(&["run", "shell", "--image=busybox", "--labels=app=shell"])
        .await;
    assert_eq!(
        object(&server, "", "pods", "shell")["spec"]["containers"][0]["image"],
        "busybox"
    );
    k.ok(&[
        "expose",
        "deployment",
        "web",
        "--port=8080",
        "--target-port=80",
    ])
    .await;
    let exposed = object(&server, "", "services", "web");
    assert_eq!(exposed["spec"]["selector"], json!({"app": "web"}));
    assert_eq!(exposed["spec"]["ports"][0]["port"], 8080);
    k.ok(&["label", "deployment", "web", "tier=frontend"]).await;
    assert_eq!(
        object(&server, "apps", "deployments", "web")["metadata"]["labels"]["tier"],
        "frontend"
    );
    k.ok(&["scale", "deployment", "web", "--replicas=3"]).await;
    assert_eq!(
        object(&server, "apps", "deployments", "web")["spec"]["replicas"],
        3
    );
    k.ok(&["set", "image", "deployment/web", "nginx=nginx:1.27"])
        .await;
    let d = object(&server, "apps", "deployments", "web");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    let out = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=20s"])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
    assert_eq!(
        object(&server, "apps", "deployments", "web")["status"]["updatedReplicas"],
        3
    );

    // Discovery: api-resources lists every kind with its short names.
    let out = k.ok(&["api-resources"]).await;
    for (name, short) in [
        ("statefulsets", "sts"),
        ("cronjobs", "cj"),
        ("networkpolicies", "netpol"),
        ("poddisruptionbudgets", "pdb"),
    ] {
        assert!(
            out.lines()
                .any(|l| l.split_whitespace().take(2).collect::<Vec<_>>() == [name, short]),
            "api-resources lists {name} ({short}):\n{out}"
        );
    }
    assert!(out.lines().any(|l| l.starts_with("jobs ")), "{out}");
    let out = k.ok(&["get", "all", "-o", "name"]).await;
    for want in [
        "deployment.apps/web",
        "service/backend",
        "cronjob.batch/nightly",
        "job.batch/once",
        "pod/shell",
    ] {
        assert!(out.contains(want), "get all lists {want}:\n{out}");
    }

    // An event written through events.k8s.io/v1 is shown by `kubectl get events` (core/v1).
    server
        .create_json(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "web-scaled", "namespace": "default"},
            "eventTime": "2025-03-01T10:00:00.000000Z", "reportingController": "example.com/ctl",
            "reportingInstance": "ctl-0", "action": "Scale", "reason": "ScaledUp", "type": "Normal",
            "note": "scaled to 3", "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"}}))
        .expect("event");
    let out = k.ok(&["get", "events"]).await;
    assert!(
        out.contains("web-scaled") || out.contains("ScaledUp"),
        "{out}"
    );
    let out = k.ok(&["get", "events", "-o", "json"]).await;
    let list: Value = serde_json::from_str(&out).expect("events JSON");
    let ev = list["items"]
        .as_array()
        .and_then(|items| items.iter().find(|e| e["metadata"]["name"] == "web-scaled"))
        .cloned()
        .expect("the event");
    assert_eq!(ev["apiVersion"], "v1");
    assert_eq!(ev["message"], "scaled to 3");
    assert_eq!(ev["involvedObject"]["name"], "web");
    let out = k
        .ok(&[
            "get",
            "events",
            "--field-selector",
            "involvedObject.name=web",
            "-o",
            "name",
        ])
        .await;
    assert!(out.contains("web-scaled"), "{out}");
}
