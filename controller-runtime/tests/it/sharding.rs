//! Sharding end to end on the simulator: replicas hold their shard Leases and each runs the
//! ring's sharder in its manager (one leads); ConfigMaps are assigned by the ring and the Secrets
//! they own follow them; a joining shard gets its share through the drain handshake only (no
//! object is taken from a live shard without its acknowledgement); a shard that leaves has its
//! objects moved at once, and so does one that dies silently, once its Lease has been silent for
//! two durations; the generated RBAC policy holds what the sharder needs.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams, PostParams};
use kube_rt_controller_runtime::manager::Manager;
use kube_rt_controller_runtime::rbac::Verb;
use kube_rt_controller_runtime::sharding::{
    Admission, MemberEnd, Ring, Shard, ShardMember, ShardName, Sharder, ShardingConfig,
    drain_label, shard_label, shard_selector,
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::common::*;

const RING: &str = "mirror";
const OBJECTS: usize = 120;
const LIMIT: Duration = Duration::from_secs(30);

/// Short Lease timings (a silent shard is taken over after 8 s), with room for a loaded
/// machine: a renewal may take up to 3 s before the shard stops.
fn config(shard: &str) -> ShardingConfig {
    ShardingConfig::new(RING, NS).shard(shard).lease_timings(
        Duration::from_secs(4),
        Duration::from_secs(3),
        Duration::from_millis(500),
    )
}

/// One replica: its manager running the sharder, its shard Lease, and a worker standing in for
/// its controllers (it admits each of its objects the way a reconciler does).
struct Replica {
    manager: Arc<Manager>,
    running: JoinHandle<Result<(), kube_rt_controller_runtime::manager::Error>>,
    member: JoinHandle<MemberEnd>,
    worker: JoinHandle<()>,
    stop: CancellationToken,
    acknowledged: Arc<AtomicU64>,
    sharder: Arc<kube_rt_controller_runtime::sharding::SharderStats>,
}

async fn start(server: &apiserver_sim::ApiServer, shard: &str) -> Replica {
    let manager = Arc::new(manager(server).build());
    let client = manager.client().clone();
    let sharder = Sharder::new(client.clone(), &config(shard), manager.metrics())
        .unwrap()
        .shard::<ConfigMap>()
        .owned::<Secret>()
        .resync_period(Duration::from_millis(500));
    let stats = sharder.stats();
    manager.add(sharder).unwrap();
    let running = spawn(&manager);
    let member = ShardMember::new(client.clone(), &config(shard), manager.metrics()).unwrap();
    let stop = CancellationToken::new();
    let member_task = {
        let (member, stop) = (member.clone(), stop.clone());
        tokio::spawn(async move { member.run(stop).await })
    };
    let acknowledged = Arc::new(AtomicU64::new(0));
    let worker = {
        let shard = Shard::new(client.clone(), member);
        let (stop, acknowledged) = (stop.clone(), acknowledged.clone());
        let api: Api<ConfigMap> = Api::namespaced(client, NS);
        let mine = ListParams::default().labels(&shard_selector(RING, shard.name().as_str()));
        tokio::spawn(async move {
            while !stop.is_cancelled() {
                for object in api.list(&mine).await.map(|l| l.items).unwrap_or_default() {
                    if shard.admit(&object).await.unwrap() == Admission::Drained {
                        acknowledged.fetch_add(1, Ordering::SeqCst);
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    };
    Replica {
        manager,
        running,
        member: member_task,
        worker,
        stop,
        acknowledged,
        sharder: stats,
    }
}

impl Replica {
    /// Releases the shard Lease and stops the manager.
    async fn stop(self) {
        self.stop.cancel();
        assert_eq!(self.member.await.unwrap(), MemberEnd::ShutDown);
        self.worker.await.unwrap();
        self.manager.shutdown_handle().shutdown();
        self.running.await.unwrap().unwrap();
    }

    /// Dies without a word: its Lease is neither renewed nor released.
    async fn kill(self) {
        self.member.abort();
        self.worker.abort();
        let _ = self.member.await;
        let _ = self.worker.await;
        self.manager.shutdown_handle().shutdown();
        self.running.await.unwrap().unwrap();
    }
}

/// Shard labels by object name, of the objects `api` lists; an object still carrying the drain
/// label shows as `<shard> (draining)`.
async fn shards_of<K>(api: Api<K>) -> BTreeMap<String, String>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let (label, drain) = (shard_label(RING), drain_label(RING));
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|object| {
            let meta = object.meta();
            let labels = meta.labels.as_ref()?;
            let shard = labels.get(&label)?;
            let shard = if labels.contains_key(&drain) {
                format!("{shard} (draining)")
            } else {
                shard.clone()
            };
            Some((meta.name.clone()?, shard))
        })
        .collect()
}

/// Shard labels by object name, of ConfigMaps and of Secrets.
async fn labels(
    server: &apiserver_sim::ApiServer,
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let client = server.client().unwrap();
    (
        shards_of(Api::<ConfigMap>::namespaced(client.clone(), NS)).await,
        shards_of(Api::<Secret>::namespaced(client, NS)).await,
    )
}

/// What the ring of `shards` assigns each ConfigMap to.
fn wanted(shards: &[&str]) -> BTreeMap<String, String> {
    let ring = Ring::new(shards.iter().map(|s| ShardName::new(*s)));
    (0..OBJECTS)
        .map(|i| {
            let name = format!("cm-{i}");
            let shard = ring.assign(&format!("/ConfigMap/{NS}/{name}")).unwrap();
            (name, shard.to_string())
        })
        .collect()
}

/// Waits until every ConfigMap is where the ring of `shards` wants it, every Secret is on its
/// owner's shard, and no drain is pending.
async fn settled(server: &apiserver_sim::ApiServer, shards: &[&str]) {
    let want = wanted(shards);
    let want_secrets: BTreeMap<String, String> = want
        .iter()
        .map(|(name, shard)| (format!("{name}-secret"), shard.clone()))
        .collect();
    testkit::eventually_async(
        &format!("every object on the ring of {shards:?}"),
        LIMIT,
        || async {
            let (maps, secrets) = labels(server).await;
            maps == want && secrets == want_secrets
        },
    )
    .await;
}

fn total(replicas: &[&Replica], counter: impl Fn(&Replica) -> u64) -> u64 {
    replicas.iter().map(|r| counter(r)).sum()
}

#[tokio::test]
async fn a_ring_assigns_drains_and_moves_objects_between_live_shards() {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), NS);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), NS);
    for i in 0..OBJECTS {
        let map = maps
            .create(&PostParams::default(), &cm(&format!("cm-{i}"), "1"))
            .await
            .unwrap();
        let uid = map.metadata.uid.unwrap();
        let owner = owner_ref("v1", "ConfigMap", &format!("cm-{i}"), &uid, true);
        secrets
            .create(
                &PostParams::default(),
                &secret(&format!("cm-{i}-secret"), vec![owner]),
            )
            .await
            .unwrap();
    }

    let s0 = start(&server, "s0").await;
    // s0's sharder leads (the counts below are read from the replicas still running).
    eventually("s0's sharder leading", LIMIT, || {
        s0.sharder.counts().passes > 0
    })
    .await;
    let s1 = start(&server, "s1").await;
    let s2 = start(&server, "s2").await;
    settled(&server, &["s0", "s1", "s2"]).await;
    let before = wanted(&["s0", "s1", "s2"]);
    let shares: BTreeMap<&String, usize> = before.values().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(s).or_default() += 1;
        m
    });
    assert_eq!(shares.len(), 3, "every shard gets objects: {shares:?}");

    // A shard joins: the objects the ring now wants on it leave their live shards by the drain
    // handshake only, each acknowledged by its shard before it is assigned again.
    let running = [&s0, &s1, &s2];
    let drains_before = total(&running, |r| r.sharder.counts().drains);
    let acknowledged_before = total(&running, |r| r.acknowledged.load(Ordering::SeqCst));
    let s3 = start(&server, "s3").await;
    settled(&server, &["s0", "s1", "s2", "s3"]).await;
    let after = wanted(&["s0", "s1", "s2", "s3"]);
    let moved = before
        .iter()
        .filter(|(name, shard)| after[*name] != **shard)
        .count() as u64;
    assert!(moved > 0, "the new shard gets a share");
    assert!(
        moved as f64 <= 1.5 * OBJECTS as f64 / 4.0,
        "{moved} of {OBJECTS} objects moved for one shard joining four"
    );
    let all = [&s0, &s1, &s2, &s3];
    let drains = total(&all, |r| r.sharder.counts().drains) - drains_before;
    let acknowledged = total(&all, |r| r.acknowledged.load(Ordering::SeqCst)) - acknowledged_before;
    assert_eq!(drains, moved, "every move from a live shard is a drain");
    assert_eq!(
        acknowledged, moved,
        "and every drain was acknowledged by its shard"
    );

    // A shard leaves (its Lease released): its objects move at once, nothing else moves.
    let drains_before = total(&all, |r| r.sharder.counts().drains);
    s1.stop().await;
    settled(&server, &["s0", "s2", "s3"]).await;
    let rest = [&s0, &s2, &s3];
    assert_eq!(
        total(&rest, |r| r.sharder.counts().drains),
        drains_before,
        "nothing is drained when a shard leaves"
    );

    // A shard dies silently: two Lease durations after its last renewal the sharder takes its
    // Lease over and moves its objects at once.
    let reassigned_before = total(&rest, |r| r.sharder.counts().reassigned);
    s2.kill().await;
    settled(&server, &["s0", "s3"]).await;
    let alive = [&s0, &s3];
    assert_eq!(total(&alive, |r| r.sharder.counts().drains), drains_before);
    assert!(total(&alive, |r| r.sharder.counts().reassigned) > reassigned_before);
    let lease: k8s_openapi::api::coordination::v1::Lease =
        Api::namespaced(client.clone(), NS).get("s2").await.unwrap();
    let holder = lease.spec.and_then(|spec| spec.holder_identity);
    assert_eq!(
        holder.as_deref(),
        Some("sharder/s0"),
        "the sharder holds the dead shard's Lease"
    );

    // The policy holds what the sharder needs.
    let policy = s0.manager.permissions();
    let configmaps = policy
        .iter()
        .find(|rule| rule.resource_name() == "configmaps")
        .expect("a rule on configmaps");
    assert!(
        configmaps.verb_set().contains(&Verb::Patch),
        "{configmaps:?}"
    );
    let leases = policy
        .iter()
        .filter(|rule| rule.resource_name() == "leases")
        .flat_map(|rule| rule.verb_set().iter().copied())
        .collect::<Vec<_>>();
    for verb in [
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Create,
        Verb::Update,
        Verb::Delete,
    ] {
        assert!(leases.contains(&verb), "leases need {verb:?}: {leases:?}");
    }

    for replica in [s0, s3] {
        replica.stop().await;
    }
    server.shutdown().await;
}
