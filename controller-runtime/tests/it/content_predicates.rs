//! Predicates on object content: a Deployment's spec decides which of its events enqueue, on
//! the primary watch (`for_`), an owned watch (`owns`) and a mapped one (`watches`), each
//! given as the watch's predicate.
//!
//! Each test makes the filtered change before the one that passes: the informer hands a
//! handler its events in order and a single worker takes keys in order, so once the passing
//! change was reconciled, a reconcile of the filtered one would have been seen already.
//!
//! Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster. On a
//! whole cluster the deployment controller writes each Deployment's status too, and those
//! updates pass a predicate that passes the object: counts there are "at least".

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::controller::predicate::{from_fn, update_fn};
use controller_runtime::{
    ObjectKey,
    cache::Kind,
    controller::{Action, Context, Controller, Reconciler, Request, Watch, reconciler_fn},
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// A Deployment of `replicas`, `paused` or not, controlled by `owner`.
fn deployment_of(
    name: &str,
    replicas: i32,
    paused: bool,
    owner: Option<OwnerReference>,
) -> Deployment {
    let mut deployment = deployment(name);
    deployment.spec.replicas = Some(replicas);
    deployment.spec.paused = Some(paused);
    deployment.metadata.owner_references = owner.map(|owner| vec![owner]);
    deployment
}

fn replicas(deployment: &Deployment) -> i32 {
    deployment.spec.replicas.unwrap_or(1)
}

fn paused(deployment: &Deployment) -> bool {
    deployment.spec.paused.unwrap_or(false)
}

/// The key of the object `name` in the test namespace, as counted.
fn key(name: &str) -> String {
    format!("{}/{name}", ns())
}

/// Counts the reconciles of each key of `K`.
fn counting<K: Kind>(counts: &Counts) -> impl Reconciler<K> {
    let seen = counts.clone();
    reconciler_fn(move |req: Request, _ctx: Context<K>| {
        let seen = seen.clone();
        async move {
            seen.hit(&req.to_string());
            Ok::<_, Infallible>(Action::done())
        }
    })
}

#[tokio::test(start_paused = true)]
async fn a_spec_predicate_filters_the_primary_watch() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        // Only Deployments of more than one replica are reconciled.
        .for_(
            Watch::of::<Deployment>()
                .predicate(from_fn(|deployment: &Deployment| replicas(deployment) > 1)),
        )
        .build(counting::<Deployment>(&counts))
        .unwrap();
    let running = spawn(&manager);

    let small = server
        .create(&deployment_of("small", 1, false, None))
        .await
        .unwrap();
    server
        .create(&deployment_of("big", 3, false, None))
        .await
        .unwrap();
    eventually("the big deployment", Duration::from_secs(30), || {
        counts.get(&key("big")) >= 1
    })
    .await;
    assert_eq!(counts.get(&key("small")), 0);

    // Scaled up, the small one passes (an update is judged on its new object).
    let mut scaled = small;
    scaled.spec.replicas = Some(2);
    server.replace(&scaled).await.unwrap();
    eventually("the scaled-up deployment", Duration::from_secs(30), || {
        counts.get(&key("small")) >= 1
    })
    .await;

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_spec_predicate_filters_an_owned_watch() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        // Only paused Deployments re-trigger the ConfigMap that owns them.
        .owns(Watch::of::<Deployment>().predicate(from_fn(paused)))
        .build(counting::<ConfigMap>(&counts))
        .unwrap();
    let running = spawn(&manager);

    let a = server.create(&cm("a", "1")).await.unwrap();
    let b = server.create(&cm("b", "1")).await.unwrap();
    eventually("the config maps", Duration::from_secs(30), || {
        counts.get(&key("a")) == 1 && counts.get(&key("b")) == 1
    })
    .await;
    let owned_by = |owner: &ConfigMap| {
        let (name, uid) = (
            owner.metadata.name.as_deref(),
            owner.metadata.uid.as_deref(),
        );
        Some(owner_ref(
            "v1",
            "ConfigMap",
            name.unwrap(),
            uid.unwrap(),
            true,
        ))
    };
    server
        .create(&deployment_of("running", 1, false, owned_by(&b)))
        .await
        .unwrap();
    server
        .create(&deployment_of("paused", 1, true, owned_by(&a)))
        .await
        .unwrap();
    eventually(
        "the paused deployment's owner",
        Duration::from_secs(30),
        || counts.get(&key("a")) >= 2,
    )
    .await;
    assert_eq!(counts.get(&key("b")), 1);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_spec_predicate_filters_a_mapped_watch() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        // Each Deployment requests the ConfigMap of its name: on creation, deletion, and on the
        // updates that change its replica count.
        .watches(
            Watch::of::<Deployment>().predicate(update_fn(|old: &Deployment, new: &Deployment| {
                replicas(old) != replicas(new)
            })),
            |deployment: &Deployment| {
                ObjectKey::namespaced(
                    ns(),
                    deployment.metadata.name.as_deref().unwrap_or_default(),
                )
                .ok()
            },
        )
        .build(counting::<ConfigMap>(&counts))
        .unwrap();
    let running = spawn(&manager);

    server.create(&cm("quiet", "1")).await.unwrap();
    server.create(&cm("web", "1")).await.unwrap();
    eventually("the config maps", Duration::from_secs(30), || {
        counts.get(&key("quiet")) == 1 && counts.get(&key("web")) == 1
    })
    .await;
    let quiet = server
        .create(&deployment_of("quiet", 1, false, None))
        .await
        .unwrap();
    let web = server
        .create(&deployment_of("web", 1, false, None))
        .await
        .unwrap();
    eventually("the deployments", Duration::from_secs(30), || {
        counts.get(&key("quiet")) == 2 && counts.get(&key("web")) == 2
    })
    .await;

    let mut relabelled = quiet;
    relabelled.metadata.labels = Some([("tier".to_owned(), "front".to_owned())].into());
    server.replace(&relabelled).await.unwrap();
    let mut rescaled = web;
    rescaled.spec.replicas = Some(4);
    server.replace(&rescaled).await.unwrap();
    eventually("the rescaled deployment", Duration::from_secs(30), || {
        counts.get(&key("web")) == 3
    })
    .await;
    assert_eq!(counts.get(&key("quiet")), 2);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
