//! The sample-controller as three shards of one ring against the simulator, built as the binary
//! builds them with `--shards 3`: every Foo is assigned by the ring, gets its Deployment, and the
//! Deployment follows its Foo's shard; each shard caches only its own Foos.

use std::collections::BTreeMap;

use controller_runtime::sharding::{Ring, ShardName, ring_key, shard_label};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::PostParams;
use kube::{Api, Resource, ResourceExt};
use testenv::TestEnv;

use crate::sample_controller::controller::register;
use crate::sample_controller::foo::{Foo, crd, new_foo};
use crate::sample_controller::operator::{RING_NAME, Settings, ShardSettings, manager_builder};

const SHARDS: [&str; 3] = ["shard-0", "shard-1", "shard-2"];
const FOOS: usize = 12;

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

    let foos: Api<Foo> = Api::namespaced(client.clone(), env.namespace());
    for i in 0..FOOS {
        let name = format!("foo-{i}");
        foos.create(&PostParams::default(), &new_foo(&name, &name, Some(1)))
            .await
            .unwrap();
    }
    let ring = Ring::new(SHARDS.map(ShardName::from));
    let wanted: BTreeMap<String, String> = (0..FOOS)
        .map(|i| {
            let name = format!("foo-{i}");
            let key = ring_key(&Foo::group(&()), &Foo::kind(&()), env.namespace(), &name);
            (name, ring.assign(&key).unwrap().to_string())
        })
        .collect();
    let label = shard_label(RING_NAME);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), env.namespace());
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
        (assigned == wanted && followed == wanted).then_some(())
    })
    .await
    .unwrap();
    let used: std::collections::BTreeSet<&String> = wanted.values().collect();
    assert!(used.len() > 1, "the ring spreads the Foos: {wanted:?}");
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
