//! The sample-controller sharded over one ring, against the simulator or an existing cluster:
//! three shards as the binary builds them with `--shards 3`, each in a manager of this
//! process — every Foo is assigned by the ring, gets its Deployment, and the Deployment follows
//! its Foo's shard; each shard caches only its own Foos — and the binary itself with
//! `--shards 3`, which also takes every Foo to Running Pods and its `availableReplicas` and,
//! once a Foo is deleted, has the garbage collector remove its Deployment (where the server
//! runs Pods and collects garbage: the simulator's workload simulator, a whole cluster).

use std::collections::BTreeMap;
use std::process::Stdio;

use controller_runtime::sharding::{Ring, ShardName, ring_key, shard_label};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Resource, ResourceExt};
use testenv::TestEnv;

use crate::common;
use crate::common::workloads::FooEnv;
use crate::sample_controller::controller::register;
use crate::sample_controller::foo::{Foo, crd, new_foo};
use crate::sample_controller::operator::{RING_NAME, Settings, ShardSettings, manager_builder};

const SHARDS: [&str; 3] = ["shard-0", "shard-1", "shard-2"];
const FOOS: usize = 12;

/// Creates the Foos `foo-0` … `foo-<count - 1>` of one replica in the environment's namespace;
/// the shard the ring assigns each of them, by name.
async fn create_foos(env: &TestEnv, count: usize) -> BTreeMap<String, String> {
    let foos: Api<Foo> = Api::namespaced(env.client(), env.namespace());
    let ring = Ring::new(SHARDS.map(ShardName::from));
    let mut wanted = BTreeMap::new();
    for i in 0..count {
        let name = format!("foo-{i}");
        foos.create(&PostParams::default(), &new_foo(&name, &name, Some(1)))
            .await
            .unwrap();
        let key = ring_key(&Foo::group(&()), &Foo::kind(&()), env.namespace(), &name);
        wanted.insert(name, ring.assign(&key).unwrap().to_string());
    }
    let used: std::collections::BTreeSet<&String> = wanted.values().collect();
    assert!(used.len() > 1, "the ring spreads the Foos: {wanted:?}");
    wanted
}

/// Waits until every Foo carries the shard label `wanted` gives it, and its Deployment the
/// same.
async fn wait_assigned(env: &TestEnv, wanted: &BTreeMap<String, String>) {
    let foos: Api<Foo> = Api::namespaced(env.client(), env.namespace());
    let deployments: Api<Deployment> = Api::namespaced(env.client(), env.namespace());
    let label = shard_label(RING_NAME);
    env.eventually("every Foo on its shard, its Deployment with it", || async {
        let foos = foos.list(&Default::default()).await.unwrap();
        let shard_of = |labels: &BTreeMap<String, String>| labels.get(&label).cloned();
        let assigned: BTreeMap<String, String> = foos
            .iter()
            .filter_map(|foo| Some((foo.name_any(), shard_of(foo.labels())?)))
            .collect();
        let followed: BTreeMap<String, String> = deployments
            .list(&Default::default())
            .await
            .unwrap()
            .iter()
            .filter_map(|deployment| {
                let owner = deployment.owner_references().first()?.name.clone();
                Some((owner, shard_of(deployment.labels())?))
            })
            .collect();
        (&assigned == wanted && &followed == wanted).then_some(())
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_shards_split_the_foos_and_their_deployments_follow() {
    let env = TestEnv::builder().crd(crd()).start().await.unwrap();
    let client = env.client();
    let mut managers = Vec::new();
    for shard in SHARDS {
        let settings = Settings {
            sharding: Some(ShardSettings {
                ring: RING_NAME.to_owned(),
                shard: shard.to_owned(),
                namespace: env.namespace().to_owned(),
            }),
            // On an existing cluster other tests' Foos live in other namespaces.
            namespace: Some(env.namespace().to_owned()),
            ..Settings::default()
        };
        let manager = manager_builder(client.clone(), &settings)
            .handle_signals(false)
            .build();
        register(&manager).unwrap();
        managers.push(env.start_manager(manager));
    }

    let wanted = create_foos(&env, FOOS).await;
    wait_assigned(&env, &wanted).await;
    for (index, shard) in SHARDS.iter().enumerate() {
        let own = wanted.values().filter(|wanted| wanted == shard).count();
        let cached = managers[index]
            .manager()
            .cache()
            .lister::<Foo>()
            .unwrap()
            .list(&kube::core::Selector::default())
            .len();
        assert_eq!(cached, own, "{shard} caches its own Foos only");
    }
    for running in managers {
        running.stop().await.unwrap();
    }
}

/// Foos of the binary's run: one Pod each, so that a small test cluster runs them all.
const BINARY_FOOS: usize = 6;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_with_three_shards_runs_every_foo_to_available_pods() {
    let foo_env = FooEnv::start(crd()).await.unwrap();
    let env = &foo_env.env;
    foo_env.notice_skipped_steps("Running Pods and availableReplicas", "the test's last step");
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = match env.simulator() {
        Some(server) => {
            let path = home.path().join("kubeconfig");
            server.write_kubeconfig(&path).unwrap();
            path
        }
        None => env.existing_cluster().unwrap().kubeconfig().to_owned(),
    };
    let mut child = common::sample_controller(home.path())
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args(["--namespace", env.namespace(), "--shards", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();

    let wanted = create_foos(env, BINARY_FOOS).await;
    wait_assigned(env, &wanted).await;
    let foos: Api<Foo> = Api::namespaced(env.client(), env.namespace());
    if foo_env.runs_pods {
        for name in wanted.keys() {
            let selector = format!("app=nginx,controller={name}");
            env.eventually(&format!("a Ready Pod of {name}"), || async {
                (foo_env.ready_pods(&selector).await.len() == 1).then_some(())
            })
            .await
            .unwrap();
        }
        env.eventually("every Foo's availableReplicas at 1", || async {
            let listed = foos.list(&Default::default()).await.unwrap();
            listed
                .items
                .iter()
                .all(|foo| {
                    foo.status
                        .as_ref()
                        .is_some_and(|s| s.available_replicas == 1)
                })
                .then_some(())
        })
        .await
        .unwrap();
    }

    if foo_env.collects_garbage {
        foos.delete("foo-0", &DeleteParams::default())
            .await
            .unwrap();
        foo_env.deployment_collected("foo-0").await;
    }
    common::interrupt_and_expect_clean_exit(&mut child, common::kubectl::DEADLINE).await;
}
