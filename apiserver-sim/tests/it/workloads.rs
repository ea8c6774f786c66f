//! The workload simulator: Deployment status converges to the spec after the delay,
//! follows scaling, stays off unless enabled, and is written once per change.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::wait::{Condition, await_condition};
use kube_rt_apiserver_sim::ApiServer;
use serde_json::json;

const DELAY: Duration = Duration::from_millis(200);
/// Upper bound on any wait for something that should happen.
const DEADLINE: Duration = Duration::from_secs(10);

async fn server(simulate: bool) -> ApiServer {
    let mut b = ApiServer::builder();
    if simulate {
        b = b.workload_simulator(DELAY);
    }
    b.start().await.expect("server starts")
}

fn deployment(name: &str, replicas: Option<i32>) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}
            }
        }
    }))
    .expect("valid deployment")
}

/// Status converged to `replicas` for the object's current generation.
fn converged(replicas: i32) -> impl Condition<Deployment> {
    move |d: Option<&Deployment>| {
        let Some(d) = d else { return false };
        let Some(s) = &d.status else { return false };
        s.observed_generation == d.metadata.generation
            && s.replicas == Some(replicas)
            && s.updated_replicas == Some(replicas)
            && s.ready_replicas == Some(replicas)
            && s.available_replicas == Some(replicas)
    }
}

async fn wait_converged(api: &Api<Deployment>, name: &str, replicas: i32) -> Deployment {
    tokio::time::timeout(
        DEADLINE,
        await_condition(api.clone(), name, converged(replicas)),
    )
    .await
    .expect("status converges before the deadline")
    .expect("watch works")
    .expect("deployment exists")
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
async fn status_converges_after_the_delay() {
    let server = server(true).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    let start = tokio::time::Instant::now();
    let created = api
        .create(&PostParams::default(), &deployment("web", Some(3)))
        .await
        .expect("create");
    assert_eq!(
        created.status.clone().unwrap_or_default(),
        Default::default(),
        "an empty status at creation"
    );
    let d = wait_converged(&api, "web", 3).await;
    assert!(start.elapsed() >= DELAY, "written only after the delay");
    let rv = |d: &Deployment| d.metadata.resource_version.clone().unwrap_or_default();
    assert_ne!(
        rv(&d),
        rv(&created),
        "status write bumps the resourceVersion"
    );
    let s = d.status.expect("status");
    assert_eq!(s.observed_generation, Some(1));
    assert_eq!(s.unavailable_replicas, None);
    let conds = s.conditions.expect("conditions");
    for (ty, reason) in [
        ("Available", "MinimumReplicasAvailable"),
        ("Progressing", "NewReplicaSetAvailable"),
    ] {
        let c = conds
            .iter()
            .find(|c| c.type_.as_deref() == Some(ty))
            .expect("condition present");
        assert_eq!(c.status.as_deref(), Some("True"));
        assert_eq!(c.reason.as_deref(), Some(reason));
        assert!(c.last_update_time.is_some() && c.last_transition_time.is_some());
    }
    server.shutdown().await;
}

#[tokio::test]
async fn replicas_default_to_one() {
    let server = server(true).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    api.create(&PostParams::default(), &deployment("single", None))
        .await
        .expect("create");
    wait_converged(&api, "single", 1).await;
    server.shutdown().await;
}

#[tokio::test]
async fn status_follows_a_scale_up() {
    let server = server(true).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    api.create(&PostParams::default(), &deployment("web", Some(1)))
        .await
        .expect("create");
    wait_converged(&api, "web", 1).await;
    let scaled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("scale up");
    assert_eq!(scaled.metadata.generation, Some(2));
    assert_eq!(scaled.status.and_then(|s| s.available_replicas), Some(1));
    let d = wait_converged(&api, "web", 4).await;
    assert_eq!(d.status.and_then(|s| s.observed_generation), Some(2));
    server.shutdown().await;
}

#[tokio::test]
async fn no_status_when_disabled() {
    let server = server(false).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    let created = api
        .create(&PostParams::default(), &deployment("web", Some(2)))
        .await
        .expect("create");
    let rv = created.metadata.resource_version.unwrap_or_default();
    assert_eq!(events_within(&api, "web", &rv, DELAY * 4).await, 0);
    let d = api.get("web").await.expect("get");
    assert_eq!(
        d.status.clone().unwrap_or_default(),
        Default::default(),
        "status untouched: {:?}",
        d.status
    );
    assert_eq!(d.metadata.resource_version, Some(rv));
    server.shutdown().await;
}

#[tokio::test]
async fn no_writes_once_converged() {
    let server = server(true).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    api.create(&PostParams::default(), &deployment("web", Some(2)))
        .await
        .expect("create");
    let d = wait_converged(&api, "web", 2).await;
    let rv = d.metadata.resource_version.clone().unwrap_or_default();
    let global = server.resource_version();
    // A metadata-only change (no new generation) must not trigger a status write either.
    let labelled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "frontend"}}})),
        )
        .await
        .expect("label");
    assert_eq!(labelled.metadata.generation, d.metadata.generation);
    assert_eq!(events_within(&api, "web", &rv, DELAY * 4).await, 1);
    assert_eq!(
        server.resource_version(),
        global + 1,
        "only the label write"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn deleting_deployments_are_skipped() {
    let server = server(true).await;
    let api: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    let mut dep = deployment("web", Some(2));
    dep.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &dep)
        .await
        .expect("create");
    api.delete("web", &Default::default())
        .await
        .expect("delete");
    let d = api.get("web").await.expect("still there (finalizer)");
    assert!(d.metadata.deletion_timestamp.is_some());
    let rv = d.metadata.resource_version.clone().unwrap_or_default();
    assert_eq!(events_within(&api, "web", &rv, DELAY * 4).await, 0);
    assert_eq!(
        api.get("web")
            .await
            .expect("get")
            .status
            .unwrap_or_default(),
        Default::default()
    );
    server.shutdown().await;
}
