//! kubectl's workload commands against the simulator with the workload simulator on, as a
//! user would type them against a cluster: `rollout status|history|undo|restart` of a
//! Deployment, `run` + `wait --for=condition=Ready`, `logs`, `create job` + `wait
//! --for=condition=complete`, and `expose` (a cluster IP and Endpoints). Skipped, with a
//! notice, when `kubectl` is not installed.

use std::net::Ipv4Addr;
use std::time::Duration;

use crate::common::kubectl;
use apiserver_sim::ApiServer;
use serde_json::Value;
use testkit::eventually;

/// The stored Deployment `web`.
fn web(server: &ApiServer) -> Value {
    server
        .objects("apps", "deployments")
        .into_iter()
        .find(|d| d["metadata"]["name"] == "web")
        .expect("deployment web stored")
}

/// `(revision, change-cause)` rows of `kubectl rollout history`.
fn history(out: &str) -> Vec<(String, String)> {
    out.lines()
        .skip_while(|l| !l.starts_with("REVISION"))
        .skip(1)
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            let rev = cols.next()?.to_string();
            Some((rev, cols.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_runs_workloads() {
    let Some((server, _dir, k)) = kubectl::start(
        "the kubectl workloads test",
        ApiServer::builder().workload_simulator(Duration::from_millis(100)),
    )
    .await
    else {
        return;
    };

    // Rollouts: status, a second revision with a change cause, undo, restart, history.
    k.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.26",
        "--replicas=2",
    ])
    .await;
    let out = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
    k.ok(&["set", "image", "deployment/web", "nginx=nginx:1.27"])
        .await;
    k.ok(&[
        "annotate",
        "deployment/web",
        "kubernetes.io/change-cause=upgrade to 1.27",
    ])
    .await;
    let out = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
    let (mut rows, mut out) = (Vec::new(), String::new());
    for _ in 0..100 {
        out = k.ok(&["rollout", "history", "deployment/web"]).await;
        rows = history(&out);
        if rows.iter().any(|(_, cause)| cause == "upgrade to 1.27") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        rows.iter().map(|(r, _)| r.as_str()).collect::<Vec<_>>(),
        ["1", "2"],
        "{out}"
    );
    assert_eq!(rows[1].1, "upgrade to 1.27", "{out}");

    let out = k.ok(&["rollout", "undo", "deployment/web"]).await;
    assert!(out.contains("rolled back"), "{out}");
    k.ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    let d = web(&server);
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.26"
    );
    eventually("revision 3 after the undo", Duration::from_secs(10), || {
        web(&server)["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
    })
    .await;
    let out = k.ok(&["rollout", "history", "deployment/web"]).await;
    let revs: Vec<String> = history(&out).into_iter().map(|(r, _)| r).collect();
    assert_eq!(revs, ["2", "3"], "revision 1 became 3:\n{out}");

    let out = k.ok(&["rollout", "restart", "deployment/web"]).await;
    assert!(out.contains("restarted"), "{out}");
    let out = k
        .ok(&["rollout", "status", "deployment/web", "--timeout=30s"])
        .await;
    assert!(out.contains("successfully rolled out"), "{out}");
    let d = web(&server);
    assert!(
        d["spec"]["template"]["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"]
            .is_string()
    );
    assert_eq!(server.objects("apps", "replicasets").len(), 3);
    let out = k.ok(&["get", "pods", "-l", "app=web", "-o", "name"]).await;
    assert_eq!(out.lines().count(), 2, "{out}");

    // run + wait, logs.
    k.ok(&["run", "shell", "--image=busybox"]).await;
    let out = k
        .ok(&[
            "wait",
            "--for=condition=Ready",
            "pod/shell",
            "--timeout=30s",
        ])
        .await;
    assert!(out.contains("pod/shell condition met"), "{out}");
    let out = k.ok(&["logs", "shell"]).await;
    assert!(
        out.contains("started from image docker.io/library/busybox:latest"),
        "{out}"
    );
    let (ok, out) = k.run(&["logs", "nope"]).await;
    assert!(!ok && out.contains("pods \"nope\" not found"), "{out}");
    let (ok, out) = k.run(&["logs", "shell", "-c", "sidecar"]).await;
    assert!(
        !ok && out.contains("container sidecar is not valid for pod shell"),
        "{out}"
    );

    // A Job completes.
    k.ok(&["create", "job", "once", "--image=busybox"]).await;
    let out = k
        .ok(&[
            "wait",
            "--for=condition=complete",
            "job/once",
            "--timeout=30s",
        ])
        .await;
    assert!(out.contains("job.batch/once condition met"), "{out}");
    let out = k
        .ok(&["get", "job", "once", "-o", "jsonpath={.status.succeeded}"])
        .await;
    assert_eq!(out.trim(), "1");

    // expose: a cluster IP and the pods as endpoints.
    k.ok(&["expose", "deployment", "web", "--port=80"]).await;
    let ip = k
        .ok(&["get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"])
        .await;
    let ip: Ipv4Addr = ip
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("a cluster IP: {ip}"));
    assert_eq!(
        u32::from(ip) >> 20,
        u32::from(Ipv4Addr::new(10, 96, 0, 0)) >> 20,
        "{ip}"
    );
    let out = k.ok(&["get", "service", "web"]).await;
    assert!(
        out.contains("ClusterIP") && out.contains(&ip.to_string()),
        "{out}"
    );
    eventually("two endpoints", Duration::from_secs(10), || {
        server.objects("", "endpoints").iter().any(|e| {
            e["metadata"]["name"] == "web"
                && e["subsets"][0]["addresses"]
                    .as_array()
                    .is_some_and(|a| a.len() == 2)
        })
    })
    .await;
    let out = k
        .ok(&[
            "get",
            "endpoints",
            "web",
            "-o",
            "jsonpath={.subsets[0].addresses[*].ip}",
        ])
        .await;
    assert_eq!(out.split_whitespace().count(), 2, "{out}");
    server.shutdown().await;
}
