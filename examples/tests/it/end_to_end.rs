//! The sample-controller in a manager against the simulator (or an existing cluster): create a Foo, see its Deployment,
//! change replicas, see the update and the status, delete the Foo, see the Deployment collected.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use testenv::TestEnv;

use crate::sample_controller::controller::{RESYNC_PERIOD, register};
use crate::sample_controller::foo::{Foo, crd, new_foo};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foo_lifecycle() {
    let env = TestEnv::builder().crd(crd()).start().await.unwrap();
    let client = env.client();
    let manager = env.manager_builder().resync_period(RESYNC_PERIOD).build();
    register(&manager).unwrap();
    let running = env.start_manager(manager);

    let foos: Api<Foo> = Api::namespaced(client.clone(), env.namespace());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), env.namespace());
    let events: Api<Event> = Api::namespaced(client.clone(), env.namespace());
    let foo = foos
        .create(
            &PostParams::default(),
            &new_foo("web", "web-nginx", Some(1)),
        )
        .await
        .unwrap();

    let deployment = env
        .eventually("the Deployment", || async {
            deployments.get_opt("web-nginx").await.unwrap()
        })
        .await
        .unwrap();
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
    env.eventually("the Foo's status", || async {
        foos.get("web").await.unwrap().status
    })
    .await
    .unwrap();
    env.eventually("the Synced event", || async {
        let listed = events.list(&ListParams::default()).await.unwrap();
        listed.items.into_iter().find(|event| {
            event.reason.as_deref() == Some("Synced")
                && event.message.as_deref() == Some("Foo synced successfully")
                && event.involved_object.name.as_deref() == Some("web")
        })
    })
    .await
    .unwrap();

    let patch = serde_json::json!({"spec": {"replicas": 3}});
    foos.patch("web", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    env.eventually("the Deployment scaled to 3", || async {
        let replicas = deployments.get("web-nginx").await.unwrap().spec.replicas;
        (replicas == Some(3)).then_some(())
    })
    .await
    .unwrap();

    foos.delete("web", &DeleteParams::default()).await.unwrap();
    // The garbage collector is the controller-manager's: a bare API server has none.
    let Some(server) = env.simulator_or_skip("garbage collector (the rest of the test)") else {
        running.stop().await.unwrap();
        return;
    };
    server.settle().await;
    env.eventually("the Deployment collected", || async {
        deployments
            .get_opt("web-nginx")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await
    .unwrap();

    running.stop().await.unwrap();
}
