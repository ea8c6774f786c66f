//! The sample-controller in a manager against the simulator (or an existing cluster): create a
//! Foo, see its Deployment, its Running Pods and the Foo's `availableReplicas`; change replicas,
//! see the Deployment, the Pods and the status follow; delete the Foo, see the garbage collector
//! remove the Deployment and its Pods. The simulator runs the Pods with its workload simulator;
//! a real cluster with its controller-manager, scheduler and nodes (a bare API server has none
//! of them: those steps are skipped there, with a notice). With the caches typed and compact.

use controller_runtime::cache::Storage;
use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::Event;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};

use crate::common::workloads::FooEnv;
use crate::sample_controller::controller::{RESYNC_PERIOD, register};
use crate::sample_controller::foo::{Foo, crd, new_foo};

/// The labels of the Foo `web`'s Pods.
const PODS: &str = "app=nginx,controller=web";

/// Waits until `web` has `replicas` Running and Ready Pods and its status says so.
async fn available(foo_env: &FooEnv, foos: &Api<Foo>, replicas: usize) {
    let env = &foo_env.env;
    env.eventually(&format!("{replicas} Ready Pods of web"), || async {
        (foo_env.ready_pods(PODS).await.len() == replicas).then_some(())
    })
    .await
    .unwrap();
    env.eventually(
        &format!("web's availableReplicas at {replicas}"),
        || async {
            let status = foos.get("web").await.unwrap().status?;
            (usize::try_from(status.available_replicas) == Ok(replicas)).then_some(())
        },
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foo_lifecycle() {
    lifecycle(Storage::typed()).await;
}

/// The same with the manager's caches compact (the binary's `--compact-cache`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foo_lifecycle_on_compact_caches() {
    lifecycle(Storage::compact()).await;
}

async fn lifecycle(storage: Storage) {
    let foo_env = FooEnv::start(crd()).await.unwrap();
    let env = &foo_env.env;
    let client = env.client();
    let manager = env
        .manager_builder()
        .resync_period(RESYNC_PERIOD)
        .default_storage(storage)
        .build();
    register(&manager).unwrap();
    let running = env.start_manager(manager);
    foo_env.notice_skipped_steps("Running Pods and availableReplicas", "the test's last step");

    let foos: Api<Foo> = Api::namespaced(client.clone(), env.namespace());
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), env.namespace());
    let replica_sets: Api<ReplicaSet> = Api::namespaced(client.clone(), env.namespace());
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
    if foo_env.runs_pods {
        available(&foo_env, &foos, 1).await;
    }

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
    if foo_env.runs_pods {
        available(&foo_env, &foos, 3).await;
    }

    foos.delete("web", &DeleteParams::default()).await.unwrap();
    if !foo_env.collects_garbage {
        running.stop().await.unwrap();
        return;
    }
    foo_env.deployment_collected("web-nginx").await;
    env.eventually("its ReplicaSets and Pods collected", || async {
        let sets = replica_sets
            .list(&ListParams::default().labels(PODS))
            .await
            .unwrap();
        (sets.items.is_empty() && foo_env.pods(PODS).await == Some(0)).then_some(())
    })
    .await
    .unwrap();

    running.stop().await.unwrap();
}
