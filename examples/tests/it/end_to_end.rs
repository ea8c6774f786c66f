//! The sample-controller in a manager against the simulator: create a Foo, see its Deployment,
//! change replicas, see the update and the status, delete the Foo, see the Deployment collected.

use crate::common;

use common::{DEADLINE, eventually_some};
use controller_runtime::Manager;
use examples::foo::{Foo, new_foo};
use examples::sample::{self, RESYNC_PERIOD};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foo_lifecycle() {
    let server = common::server_with_crd().await;
    let client = server.client().unwrap();
    let stop = CancellationToken::new();
    let manager = Manager::builder(client.clone())
        .resync_period(RESYNC_PERIOD)
        .handle_signals(false)
        .shutdown_token(stop.clone())
        .build();
    sample::register(&manager).unwrap();
    let running = tokio::spawn(async move { manager.start().await });

    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let foo = foos
        .create(
            &PostParams::default(),
            &new_foo("web", "web-nginx", Some(1)),
        )
        .await
        .unwrap();

    let deployment = eventually_some("the Deployment", DEADLINE, || async {
        deployments.get_opt("web-nginx").await.unwrap()
    })
    .await;
    let owner = &deployment.owner_references()[0];
    assert_eq!(owner.uid, foo.uid().unwrap());
    assert_eq!(
        (owner.controller, owner.block_owner_deletion),
        (Some(true), Some(true))
    );
    let pod_labels = deployment
        .spec
        .template
        .metadata
        .as_ref()
        .unwrap()
        .labels
        .as_ref();
    assert_eq!(pod_labels.unwrap()["app"], "nginx");
    assert_eq!(pod_labels.unwrap()["controller"], "web");
    assert_eq!(deployment.spec.selector.match_labels.as_ref(), pod_labels);
    assert_eq!(deployment.spec.replicas, Some(1));
    eventually_some("the Foo's status", DEADLINE, || async {
        foos.get("web").await.unwrap().status
    })
    .await;
    eventually_some("the Synced event", DEADLINE, || async {
        server.list::<Event>().into_iter().find(|event| {
            event.reason.as_deref() == Some("Synced")
                && event.message.as_deref() == Some("Foo synced successfully")
                && event.involved_object.name.as_deref() == Some("web")
        })
    })
    .await;

    let patch = serde_json::json!({"spec": {"replicas": 3}});
    foos.patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually_some("the Deployment scaled to 3", DEADLINE, || async {
        let replicas = deployments.get("web-nginx").await.unwrap().spec.replicas;
        (replicas == Some(3)).then_some(())
    })
    .await;

    foos.delete("web", &DeleteParams::default()).await.unwrap();
    server.settle().await;
    eventually_some("the Deployment collected", DEADLINE, || async {
        deployments
            .get_opt("web-nginx")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;

    stop.cancel();
    running.await.unwrap().unwrap();
}
