//! The operator against the test environment: the Deployment follows `spec.size`, the status
//! lists the Pods, an event reports the reconcile, and the Deployment goes with the Memcached;
//! with the manager's caches typed and compact.

use controller_runtime::cache::Storage;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{CustomResourceExt, ResourceExt};
use memcached_operator::{INSTANCE_LABEL, Memcached, MemcachedSpec, register};
use testenv::TestEnv;

fn pod(name: &str, instance: &str) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = Some(name.to_owned());
    pod.metadata.labels = Some([(INSTANCE_LABEL.to_owned(), instance.to_owned())].into());
    pod.spec = Some(PodSpec {
        containers: vec![Container {
            name: "memcached".to_owned(),
            image: Some("memcached:1.6-alpine".to_owned()),
            ..Container::default()
        }],
        ..PodSpec::default()
    });
    pod
}

#[tokio::test]
async fn a_memcached_gets_its_deployment_status_and_event() -> Result<(), Box<dyn std::error::Error>>
{
    the_operator_works(Storage::typed()).await
}

/// The same with the manager's caches compact: objects kept encoded, decoded when read.
#[tokio::test]
async fn a_memcached_gets_its_deployment_status_and_event_from_compact_caches()
-> Result<(), Box<dyn std::error::Error>> {
    the_operator_works(Storage::compact()).await
}

async fn the_operator_works(storage: Storage) -> Result<(), Box<dyn std::error::Error>> {
    let env = TestEnv::builder().crd(Memcached::crd()).start().await?;
    let manager = env.manager_builder().default_storage(storage).build();
    register(&manager)?;
    let running = env.start_manager(manager);

    let memcacheds: Api<Memcached> = Api::default_namespaced(env.client());
    let deployments: Api<Deployment> = Api::default_namespaced(env.client());
    let pods: Api<Pod> = Api::default_namespaced(env.client());
    let created = memcacheds
        .create(
            &PostParams::default(),
            &Memcached::new("cache", MemcachedSpec { size: 3 }),
        )
        .await?;

    // A Deployment of `size` replicas, controlled by the Memcached.
    let deployment = env
        .eventually("the Deployment", || async {
            deployments.get_opt("cache").await
        })
        .await?;
    assert_eq!(deployment.spec.replicas, Some(3));
    let owner = &deployment.owner_references()[0];
    assert_eq!(
        (owner.uid.as_str(), owner.controller),
        (created.uid().unwrap().as_str(), Some(true))
    );

    // The Pods (made here: the simulator runs no kubelet) show up in the status, and the
    // other instance's do not. On a cluster that runs workloads the Deployment's own Pods carry
    // the label too: the status lists exactly the Pods with the instance's label, the two made
    // here among them.
    for name in ["cache-a", "cache-b"] {
        pods.create(&PostParams::default(), &pod(name, "cache"))
            .await?;
    }
    pods.create(&PostParams::default(), &pod("other", "another-cache"))
        .await?;
    let labelled = ListParams::default().labels(&format!("{INSTANCE_LABEL}=cache"));
    env.eventually("every Pod of the instance in the status", || async {
        let status = memcacheds.get("cache").await.ok()?.status?;
        let mut names: Vec<String> = pods
            .list(&labelled)
            .await
            .ok()?
            .items
            .iter()
            .map(|pod| pod.name_any())
            .collect();
        names.sort();
        let made_here = ["cache-a", "cache-b"].map(String::from);
        (made_here.iter().all(|name| names.contains(name)) && status.nodes == names).then_some(())
    })
    .await?;
    let events: Api<Event> = Api::default_namespaced(env.client());
    env.eventually("the Reconciled event", || async {
        let events = events.list(&ListParams::default()).await.ok()?;
        events.items.into_iter().find(|event| {
            event.reason.as_deref() == Some("Reconciled")
                && event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("cache")
        })
    })
    .await?;

    // A new size reaches the Deployment.
    let resize = serde_json::json!({"spec": {"size": 5}});
    memcacheds
        .patch("cache", &PatchParams::default(), &Patch::Merge(&resize))
        .await?;
    env.eventually("five replicas", || async {
        let deployment = deployments.get("cache").await.ok()?;
        (deployment.spec.replicas == Some(5)).then_some(())
    })
    .await?;

    // Deleting the Memcached collects its Deployment: the garbage collector's work, the
    // simulator's own or a real cluster's controller-manager's (a bare API server has none).
    memcacheds.delete("cache", &DeleteParams::default()).await?;
    if !env.collects_garbage().await?
        && testenv::skip_on_existing_cluster("garbage collector (the test's last step)")
    {
        running.stop().await?;
        return Ok(());
    }
    env.eventually("the Deployment collected", || async {
        matches!(deployments.get_opt("cache").await, Ok(None))
    })
    .await?;

    running.stop().await?;
    Ok(())
}
