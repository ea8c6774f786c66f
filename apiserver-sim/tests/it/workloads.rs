//! The workload simulator's Deployments: a Deployment makes a ReplicaSet named by its pod
//! template hash, with revision annotations and a controller reference, whose pods are
//! scheduled to the simulated node and become Running and Ready; the Deployment's status
//! comes from its ReplicaSets; a template change rolls out a new ReplicaSet and scales the
//! old one to 0; deleted pods are recreated; scaling follows; deleting the Deployment takes
//! its ReplicaSets and pods with it; nothing runs when the simulator is off.

use std::time::Duration;

use apiserver_sim::ApiServer;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::{Value, json};
use testkit::{eventually, eventually_some};

pub(crate) const DELAY: Duration = Duration::from_millis(50);
/// Upper bound on any wait for something that should happen.
pub(crate) const DEADLINE: Duration = Duration::from_secs(10);

pub(crate) async fn server(simulate: bool) -> ApiServer {
    let mut b = ApiServer::builder();
    if simulate {
        b = b.workload_simulator(DELAY);
    }
    b.start().await.expect("server starts")
}

fn deployment(name: &str, replicas: Option<i32>, image: &str) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": image}]}
            }
        }
    }))
    .expect("valid deployment")
}

/// Creates the Deployment `web` (through the API) and returns its Api.
async fn create_web(server: &ApiServer, replicas: Option<i32>, image: &str) -> Api<Deployment> {
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    api.create(&PostParams::default(), &deployment("web", replicas, image))
        .await
        .expect("create");
    api
}

/// The stored objects of a resource whose controller is `owner_uid`.
pub(crate) fn owned(server: &ApiServer, group: &str, plural: &str, owner_uid: &str) -> Vec<Value> {
    server
        .objects(group, plural)
        .into_iter()
        .filter(|o| {
            o["metadata"]["ownerReferences"]
                .as_array()
                .is_some_and(|refs| {
                    refs.iter()
                        .any(|r| r["uid"] == owner_uid && r["controller"] == true)
                })
        })
        .collect()
}

fn stored(server: &ApiServer, group: &str, plural: &str, name: &str) -> Option<Value> {
    server
        .objects(group, plural)
        .into_iter()
        .find(|o| o["metadata"]["name"] == name)
}

/// Waits until the Deployment's status says every one of `replicas` replicas is updated and
/// available for its current generation, and returns it.
async fn rolled_out(server: &ApiServer, name: &str, replicas: i64) -> Value {
    eventually_some(
        &format!("deployment {name} rolled out to {replicas}"),
        DEADLINE,
        || {
            let d = stored(server, "apps", "deployments", name);
            let done = d.as_ref().is_some_and(|d| {
                let s = &d["status"];
                s["observedGeneration"] == d["metadata"]["generation"]
                    && [
                        "replicas",
                        "updatedReplicas",
                        "readyReplicas",
                        "availableReplicas",
                    ]
                    .iter()
                    .all(|f| s[*f].as_i64() == Some(replicas))
            });
            std::future::ready(d.filter(|_| done))
        },
    )
    .await
}

fn ready(pod: &Value) -> bool {
    pod["status"]["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    })
}

#[tokio::test]
async fn a_deployment_runs_ready_pods_through_its_replicaset() {
    let server = server(true).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    api.create(
        &PostParams::default(),
        &deployment("web", Some(2), "nginx:1.27"),
    )
    .await
    .expect("create");
    let d = rolled_out(&server, "web", 2).await;
    let uid = d["metadata"]["uid"].as_str().unwrap_or_default();
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    let conds = d["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (ty, reason) in [
        ("Available", "MinimumReplicasAvailable"),
        ("Progressing", "NewReplicaSetAvailable"),
    ] {
        assert!(
            conds
                .iter()
                .any(|c| c["type"] == ty && c["status"] == "True" && c["reason"] == reason),
            "{ty}: {conds:?}"
        );
    }
    let rss = owned(&server, "apps", "replicasets", uid);
    assert_eq!(rss.len(), 1, "{rss:?}");
    let rs = &rss[0];
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!hash.is_empty());
    assert_eq!(rs["metadata"]["name"], format!("web-{hash}"));
    assert_eq!(
        rs["spec"]["selector"]["matchLabels"]["pod-template-hash"],
        hash.as_str()
    );
    assert_eq!(
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert_eq!(
        rs["metadata"]["ownerReferences"][0]["blockOwnerDeletion"],
        true
    );
    assert_eq!(rs["status"]["readyReplicas"], 2);
    let pods = owned(
        &server,
        "",
        "pods",
        rs["metadata"]["uid"].as_str().unwrap_or_default(),
    );
    assert_eq!(pods.len(), 2);
    for pod in &pods {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        assert!(name.starts_with(&format!("web-{hash}-")), "{name}");
        assert_eq!(
            pod["metadata"]["labels"]["pod-template-hash"],
            hash.as_str()
        );
        assert_eq!(pod["spec"]["nodeName"], "sim-node");
        assert_eq!(pod["status"]["phase"], "Running");
        assert!(ready(pod), "{pod}");
        assert!(
            pod["status"]["podIP"]
                .as_str()
                .is_some_and(|ip| ip.starts_with("10.244."))
        );
        assert_eq!(pod["status"]["containerStatuses"][0]["ready"], true);
    }
    assert_ne!(pods[0]["status"]["podIP"], pods[1]["status"]["podIP"]);
    assert!(
        stored(&server, "", "nodes", "sim-node").is_some(),
        "the node is registered"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_template_change_rolls_out_a_new_replicaset() {
    let server = server(true).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    api.create(
        &PostParams::default(),
        &deployment("web", Some(3), "nginx:1.26"),
    )
    .await
    .expect("create");
    let d = rolled_out(&server, "web", 3).await;
    let uid = d["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}});
    api.patch("web", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .expect("set image");
    eventually(
        "the old ReplicaSet scaled to 0 and the new one ready",
        DEADLINE,
        || {
            let rss = owned(&server, "apps", "replicasets", &uid);
            let rev = |r: &Value| {
                r["metadata"]["annotations"]["deployment.kubernetes.io/revision"].clone()
            };
            rss.len() == 2
                && rss.iter().any(|r| {
                    rev(r) == "1" && r["spec"]["replicas"] == 0 && r["status"]["replicas"] == 0
                })
                && rss
                    .iter()
                    .any(|r| rev(r) == "2" && r["status"]["availableReplicas"] == 3)
        },
    )
    .await;
    let d = rolled_out(&server, "web", 3).await;
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    eventually("only new pods are left", DEADLINE, || {
        let pods = server.objects("", "pods");
        pods.len() == 3
            && pods
                .iter()
                .all(|p| p["spec"]["containers"][0]["image"] == "nginx:1.27" && ready(p))
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn deleted_pods_are_replaced() {
    let server = server(true).await;
    create_web(&server, Some(2), "nginx").await;
    rolled_out(&server, "web", 2).await;
    let victim = server.objects("", "pods")[0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let pods: Api<k8s_openapi::api::core::v1::Pod> =
        Api::default_namespaced(server.client().expect("client"));
    pods.delete(&victim, &DeleteParams::default())
        .await
        .expect("delete pod");
    eventually(
        "the pod is gone and replaced by a ready one",
        DEADLINE,
        || {
            let all = server.objects("", "pods");
            all.len() == 2
                && all
                    .iter()
                    .all(|p| p["metadata"]["name"] != victim.as_str() && ready(p))
        },
    )
    .await;
    rolled_out(&server, "web", 2).await;
    server.shutdown().await;
}

#[tokio::test]
async fn replicas_default_to_one_and_scaling_follows() {
    let server = server(true).await;
    let api = create_web(&server, None, "nginx").await;
    rolled_out(&server, "web", 1).await;
    let scaled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("scale up");
    assert_eq!(scaled.metadata.generation, Some(2));
    let d = rolled_out(&server, "web", 4).await;
    assert_eq!(d["status"]["observedGeneration"], 2);
    api.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 1}})),
    )
    .await
    .expect("scale down");
    rolled_out(&server, "web", 1).await;
    eventually("three pods removed", DEADLINE, || {
        server.objects("", "pods").len() == 1
    })
    .await;
    server.shutdown().await;
}

#[tokio::test]
async fn deleting_a_deployment_takes_its_replicasets_and_pods() {
    let server = server(true).await;
    let api = create_web(&server, Some(2), "nginx").await;
    rolled_out(&server, "web", 2).await;
    api.delete("web", &DeleteParams::default())
        .await
        .expect("delete");
    eventually("ReplicaSets and pods gone", DEADLINE, || {
        server.objects("apps", "replicasets").is_empty() && server.objects("", "pods").is_empty()
    })
    .await;
    server.shutdown().await;
}

/// Events for `name` within `window` after `rv` (a bounded wait for nothing to happen).
async fn events_within(api: &Api<Deployment>, name: &str, rv: &str, window: Duration) -> usize {
    let wp = WatchParams::default().fields(&format!("metadata.name={name}"));
    let mut stream = api.watch(&wp, rv).await.expect("watch").boxed();
    let mut n = 0;
    let _ = tokio::time::timeout(window, async {
        while let Ok(Some(ev)) = stream.try_next().await {
            if matches!(ev, WatchEvent::Added(_) | WatchEvent::Modified(_)) {
                n += 1;
            }
        }
    })
    .await;
    n
}

#[tokio::test]
async fn nothing_runs_when_disabled() {
    let server = server(false).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    let created = api
        .create(&PostParams::default(), &deployment("web", Some(2), "nginx"))
        .await
        .expect("create");
    let rv = created.metadata.resource_version.unwrap_or_default();
    assert_eq!(events_within(&api, "web", &rv, DELAY * 4).await, 0);
    assert!(server.objects("apps", "replicasets").is_empty());
    assert!(server.objects("", "pods").is_empty());
    assert!(server.objects("", "nodes").is_empty());
    server.shutdown().await;
}

#[tokio::test]
async fn no_writes_once_rolled_out() {
    let server = server(true).await;
    let api = create_web(&server, Some(2), "nginx").await;
    let d = rolled_out(&server, "web", 2).await;
    let rv = d["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let global = server.resource_version();
    // A metadata-only change (no new generation) makes no controller write.
    let labelled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "frontend"}}})),
        )
        .await
        .expect("label");
    assert_eq!(
        labelled.metadata.generation,
        d["metadata"]["generation"].as_i64()
    );
    assert_eq!(events_within(&api, "web", &rv, DELAY * 4).await, 1);
    assert_eq!(
        server.resource_version(),
        global + 1,
        "only the label write"
    );
    server.shutdown().await;
}
