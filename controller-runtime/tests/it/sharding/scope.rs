//! What a sharded manager refuses, the assignment webhook labelling new objects with their
//! shard as they are created, and a ring restricted to one namespace.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;

use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use controller_runtime::manager::Error;
use controller_runtime::rbac::Verb;
use controller_runtime::sharding::{Error as ShardingError, shard_label};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, PostParams};

use super::{LIMIT, RING, config};
use crate::common::*;

#[tokio::test]
async fn a_sharded_manager_refuses_leader_election_and_late_controllers() {
    let server = TestCluster::start().await.unwrap();
    let both = manager(&server)
        .sharding(config("s0"))
        .leader_election(controller_runtime::leader_election::LeaderElectionConfig::new(ns(), "x"))
        .build();
    assert!(matches!(
        both.start().await,
        Err(Error::Sharding(ShardingError::WithLeaderElection))
    ));
    let invalid = manager(&server).sharding(config("S 0")).build();
    assert!(matches!(
        invalid.start().await,
        Err(Error::Sharding(ShardingError::InvalidShardName { .. }))
    ));

    let manager = Arc::new(manager(&server).sharding(config("s0")).build());
    let running = spawn(&manager);
    eventually("s0 holding its Lease", LIMIT, || manager.is_leader()).await;
    let late = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(|_: Request, _: Context<ConfigMap>| async {
            Ok::<_, Infallible>(Action::done())
        }));
    let error = late.expect_err("a controller built after start is refused");
    assert!(error.to_string().contains("before `start`"), "{error}");
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn new_objects_are_labelled_with_their_shard_as_they_are_created() {
    use crate::webhook::support::{TestCa, test_config};
    use controller_runtime::webhook::{ClientConfig, mutating_webhook_configuration};

    let server = TestCluster::start().await.unwrap();
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    ca.issue(dir.path(), "webhook-1");
    let manager = Arc::new(
        manager(&server)
            .sharding(config("s0"))
            .webhook_server(test_config(dir.path()))
            .build(),
    );
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .owns(Watch::of::<Secret>())
        .build(reconciler_fn(|_: Request, _: Context<ConfigMap>| async {
            Ok::<_, Infallible>(Action::done())
        }))
        .unwrap();
    let webhook = manager.sharding_webhook().unwrap();
    assert_eq!(webhook.path(), "/sharding/mirror");
    let running = spawn(&manager);
    eventually("s0 given its share", LIMIT, || {
        manager.shard().unwrap().member().is_assigned()
    })
    .await;
    let port = manager.addresses().webhook.unwrap().port();
    let configuration = mutating_webhook_configuration(
        "sharding",
        &[webhook],
        &ClientConfig::Url(format!("https://localhost:{port}")),
        ca.pem().as_bytes(),
    );
    let rules = configuration.webhooks.as_ref().unwrap()[0]
        .rules
        .clone()
        .unwrap();
    let resources: Vec<_> = rules
        .iter()
        .flat_map(|rule| rule.resources.clone().unwrap())
        .collect();
    assert_eq!(resources, ["configmaps", "secrets"]);
    server.create(&configuration).await.unwrap();

    // The create's own answer carries the label: the webhook set it, not a later pass.
    let client = server.client().unwrap();
    let created = Api::<ConfigMap>::namespaced(client.clone(), ns())
        .create(&PostParams::default(), &cm("fresh", "1"))
        .await
        .unwrap();
    let label = |labels: &Option<BTreeMap<String, String>>| {
        labels
            .as_ref()
            .and_then(|labels| labels.get(&shard_label(RING)).cloned())
    };
    assert_eq!(label(&created.metadata.labels).as_deref(), Some("s0"));
    let owner = owner_ref(
        "v1",
        "ConfigMap",
        "fresh",
        created.metadata.uid.as_deref().unwrap(),
        true,
    );
    let owned = Api::<Secret>::namespaced(client, ns())
        .create(&PostParams::default(), &secret("fresh-secret", vec![owner]))
        .await
        .unwrap();
    assert_eq!(
        label(&owned.metadata.labels).as_deref(),
        Some("s0"),
        "an owned object follows its owner at creation"
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_manager_of_one_namespace_shards_only_there() {
    let server = TestCluster::start().await.unwrap();
    let other = format!("{}-other", ns());
    let mut elsewhere = cm("elsewhere", "1");
    elsewhere.metadata.namespace = Some(other.clone());
    server
        .create(&k8s_openapi::api::core::v1::Namespace {
            metadata: kube::api::ObjectMeta {
                name: Some(other.clone()),
                ..Default::default()
            },
            ..Default::default()
        })
        .await
        .unwrap();
    server.create(&elsewhere).await.unwrap();
    server.create(&cm("here", "1")).await.unwrap();
    let manager = Arc::new(
        manager(&server)
            .namespace(ns())
            .sharding(config("s0"))
            .build(),
    );
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(|_: Request, _: Context<ConfigMap>| async {
            Ok::<_, Infallible>(Action::done())
        }))
        .unwrap();
    let running = spawn(&manager);
    let client = server.client().unwrap();
    let shard_of = |namespace: &str, name: &str| {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
        let name = name.to_owned();
        async move {
            let labels = api.get(&name).await.unwrap().metadata.labels;
            labels.and_then(|labels| labels.get(&shard_label(RING)).cloned())
        }
    };
    testkit::eventually_async("here assigned", LIMIT, || async {
        shard_of(ns(), "here").await.as_deref() == Some("s0")
    })
    .await;
    // Two more passes of the sharder: still nothing outside the manager's namespace.
    let stats = manager.sharder_stats().unwrap();
    let passes = stats.counts().passes;
    eventually("two more passes", LIMIT, || {
        stats.counts().passes >= passes + 2
    })
    .await;
    assert_eq!(shard_of(&other, "elsewhere").await, None);
    // And the sharder may write labels there only.
    for rule in manager.permissions() {
        if rule.resource_name() == "configmaps" && rule.verb_set().contains(&Verb::Patch) {
            assert_eq!(rule.namespace(), Some(ns()), "{rule:?}");
        }
    }
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
