//! The workload simulator's pods and Jobs: a bare pod is scheduled and becomes Ready; a Job
//! runs a pod that succeeds and the Job completes with upstream's status; `pods/log` answers
//! with what the simulated container wrote, and with the server's errors for a missing pod
//! or container; a deleted running pod goes after its graceful stop.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DeleteParams, LogParams, PostParams};
use serde_json::{Value, json};
use testkit::{eventually, eventually_some};

use super::workloads::{DEADLINE, owned, server};

fn pod(name: &str, restart: &str) -> Pod {
    serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"restartPolicy": restart, "containers": [{"name": "main", "image": "busybox"}]}}),
    )
    .expect("valid pod")
}

fn condition(obj: &Value, ty: &str) -> Option<Value> {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == ty))
        .cloned()
}

fn stored(
    server: &apiserver_sim::ApiServer,
    group: &str,
    plural: &str,
    name: &str,
) -> Option<Value> {
    server
        .objects(group, plural)
        .into_iter()
        .find(|o| o["metadata"]["name"] == name)
}

#[tokio::test]
async fn a_bare_pod_becomes_ready_and_logs_its_start() {
    let server = server(true).await;
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.create(&PostParams::default(), &pod("shell", "Always"))
        .await
        .expect("create");
    let p = eventually_some("pod shell Ready", DEADLINE, || {
        let p = stored(&server, "", "pods", "shell")
            .filter(|p| condition(p, "Ready").is_some_and(|c| c["status"] == "True"));
        std::future::ready(p)
    })
    .await;
    assert_eq!(p["status"]["phase"], "Running");
    assert_eq!(p["spec"]["nodeName"], "sim-node");
    assert_eq!(p["status"]["hostIP"], "172.18.0.2");
    for ty in [
        "PodScheduled",
        "Initialized",
        "ContainersReady",
        "PodReadyToStartContainers",
    ] {
        assert_eq!(
            condition(&p, ty).map(|c| c["status"].clone()),
            Some(json!("True")),
            "{ty}"
        );
    }
    let cs = &p["status"]["containerStatuses"][0];
    assert_eq!(cs["image"], "docker.io/library/busybox:latest");
    assert!(
        cs["containerID"]
            .as_str()
            .is_some_and(|id| id.starts_with("containerd://"))
    );
    let log = pods
        .logs("shell", &LogParams::default())
        .await
        .expect("log");
    assert!(
        log.contains("container main started from image docker.io/library/busybox:latest"),
        "{log}"
    );

    let missing = pods
        .logs("nope", &LogParams::default())
        .await
        .expect_err("missing pod");
    assert!(
        matches!(&missing, kube::Error::Api(s) if s.code == 404 && s.message == "pods \"nope\" not found"),
        "{missing:?}"
    );
    let params = LogParams {
        container: Some("sidecar".into()),
        ..Default::default()
    };
    let bad = pods
        .logs("shell", &params)
        .await
        .expect_err("missing container");
    assert!(
        matches!(&bad, kube::Error::Api(s) if s.code == 400
        && s.message == "container sidecar is not valid for pod shell"),
        "{bad:?}"
    );

    // A running pod is deleted gracefully: the kubelet stops it and it goes.
    pods.delete("shell", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("pod shell removed", DEADLINE, || {
        stored(&server, "", "pods", "shell").is_none()
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_job_runs_a_pod_to_completion() {
    let server = server(true).await;
    let jobs: Api<Job> = Api::default_namespaced(server.client().expect("client"));
    let job: Job = serde_json::from_value(json!({"apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": "once"},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "once", "image": "busybox"}]}}}}))
    .expect("valid job");
    let created = jobs
        .create(&PostParams::default(), &job)
        .await
        .expect("create");
    let uid = created.metadata.uid.clone().unwrap_or_default();
    let spec = serde_json::to_value(created.spec).expect("spec");
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(
        spec["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid.as_str()
    );
    assert_eq!(spec["template"]["metadata"]["labels"]["job-name"], "once");

    let j = eventually_some("job once Complete", DEADLINE, || {
        let j = stored(&server, "batch", "jobs", "once")
            .filter(|j| condition(j, "Complete").is_some_and(|c| c["status"] == "True"));
        std::future::ready(j)
    })
    .await;
    let s = &j["status"];
    assert_eq!(s["succeeded"], 1);
    assert!(s.get("active").is_none(), "{s}");
    assert_eq!(s["ready"], 0);
    assert_eq!(s["terminating"], 0);
    assert!(
        s["startTime"].is_string() && s["completionTime"].is_string(),
        "{s}"
    );
    let met = condition(&j, "SuccessCriteriaMet").expect("SuccessCriteriaMet");
    assert_eq!(met["reason"], "CompletionsReached");
    assert_eq!(
        condition(&j, "Complete").map(|c| c["message"].clone()),
        Some(json!("Reached expected number of succeeded pods"))
    );

    let pods = owned(&server, "", "pods", &uid);
    assert_eq!(pods.len(), 1);
    let p = &pods[0];
    assert!(
        p["metadata"]["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("once-"))
    );
    assert_eq!(p["status"]["phase"], "Succeeded");
    assert_eq!(
        p["metadata"]["labels"]["batch.kubernetes.io/job-name"],
        "once"
    );
    assert!(
        p["metadata"].get("finalizers").is_none(),
        "the tracking finalizer is removed: {p}"
    );
    let terminated = &p["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(terminated["exitCode"], 0);
    assert_eq!(terminated["reason"], "Completed");
    let name = p["metadata"]["name"].as_str().unwrap_or_default();
    let pod_api: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    let log = pod_api
        .logs(name, &LogParams::default())
        .await
        .expect("log");
    assert!(
        log.ends_with("container once exited with code 0\n"),
        "{log}"
    );
    server.shutdown().await;
}
