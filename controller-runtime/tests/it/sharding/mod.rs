//! Sharding end to end, through the manager's sharded mode (on the simulator and, with
//! `KUBE_RT_TEST_KUBECONFIG` set, against that cluster, faults through the fault proxy): each replica is a
//! sharded manager running a controller of ConfigMaps that owns Secrets; the ring assigns the
//! ConfigMaps and the Secrets follow their owners; each replica caches and reconciles only its
//! own objects; a joining shard gets its share through the drain handshake only (no object is
//! taken from a live shard without its acknowledgement); a shard that leaves has its objects
//! moved at once, and so does one that dies silently, once its Lease has been silent for two
//! durations; `/readyz` waits for the shard's share; the metrics and the generated RBAC policy
//! hold what sharding needs. `scope.rs`: what a sharded manager refuses, the assignment webhook
//! labelling objects as they are created, and a ring of one namespace. `drain_predicates.rs`: a
//! drain reaches a shard whose predicate drops label changes.

mod drain_predicates;
mod scope;

use std::collections::{BTreeMap, BTreeSet};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use controller_runtime::manager::{Error, Manager};
use controller_runtime::rbac::Verb;
use controller_runtime::sharding::{
    Ring, ShardName, ShardingConfig, drain_label, ring_key, shard_label,
};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ListParams, PostParams};
use testkit::fault::InjectFaults;
use tokio::task::JoinHandle;

use crate::common::*;
use crate::metrics::get;

pub(super) const RING: &str = "mirror";
const OBJECTS: usize = 120;
pub(super) const LIMIT: Duration = Duration::from_secs(30);

/// Short Lease timings (a silent shard is taken over after 8 s), with room for a loaded
/// machine: a renewal may take up to 3 s before the shard stops.
pub(super) fn config(shard: &str) -> ShardingConfig {
    ShardingConfig::new(RING, ns())
        .shard(shard)
        .lease_timings(
            Duration::from_secs(4),
            Duration::from_secs(3),
            Duration::from_millis(500),
        )
        .sharder_resync_period(Duration::from_millis(500))
}

/// One replica: a sharded manager running the ConfigMap controller, which counts its
/// reconciles by ConfigMap name, and apart those of objects it saw deleted.
struct Replica {
    manager: Arc<Manager>,
    running: JoinHandle<Result<(), Error>>,
    reconciled: Counts,
    deletions: Counts,
}

async fn start(server: &TestCluster, shard: &str) -> Replica {
    start_watching(server, shard, Watch::of::<ConfigMap>()).await
}

/// A replica whose controller watches its ConfigMaps through `primary` (say, with a predicate).
async fn start_watching(server: &TestCluster, shard: &str, primary: Watch<ConfigMap>) -> Replica {
    let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let manager = Arc::new(
        manager(server)
            .sharding(config(shard))
            .health_probe_bind_address(localhost)
            .build(),
    );
    let (reconciled, deletions) = (Counts::default(), Counts::default());
    let (seen, gone) = (reconciled.clone(), deletions.clone());
    Controller::new(&manager)
        .for_(primary)
        .owns(Watch::of::<Secret>())
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                seen.hit(req.name());
                if ctx.get().is_none() {
                    gone.hit(req.name());
                }
                async { Ok::<_, Infallible>(Action::done()) }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    Replica {
        manager,
        running,
        reconciled,
        deletions,
    }
}

impl Replica {
    /// Shuts the manager down gracefully: its shard Lease is released.
    async fn stop(self) {
        self.manager.shutdown_handle().shutdown();
        self.running.await.unwrap().unwrap();
    }

    /// Dies without a word: its Lease is neither renewed nor released.
    async fn kill(self) {
        self.running.abort();
        let _ = self.running.await;
    }

    fn drains_acknowledged(&self) -> u64 {
        self.manager.shard().unwrap().drains_acknowledged()
    }

    fn sharder(&self) -> controller_runtime::sharding::SharderCounts {
        self.manager.sharder_stats().unwrap().counts()
    }

    /// The names of the test's ConfigMaps in this replica's cache.
    fn cached(&self) -> BTreeSet<String> {
        let lister = self.manager.cache().lister::<ConfigMap>().unwrap();
        lister
            .list(&kube::core::Selector::default())
            .iter()
            .filter(|map| map.metadata.namespace.as_deref() == Some(ns()))
            .filter(|map| is_own_meta(&map.metadata))
            .filter_map(|map| map.metadata.name.clone())
            .collect()
    }

    async fn readyz(&self) -> (u16, String) {
        let address = self.manager.addresses().health_probes.unwrap();
        get(address, "/readyz?verbose").await
    }
}

/// Shard labels by object name, of the objects `api` lists; an object still carrying the drain
/// label shows as `<shard> (draining)`.
async fn shards_of<K>(api: Api<K>) -> BTreeMap<String, String>
where
    K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let (label, drain) = (shard_label(RING), drain_label(RING));
    api.list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .filter_map(|object| {
            let meta = object.meta();
            // The test's objects only (a whole cluster puts a ConfigMap of its own in the
            // namespace): its ConfigMaps carry the label of the test's own.
            if K::kind(&()) == "ConfigMap" && !is_own_meta(meta) {
                return None;
            }
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
async fn labels(server: &TestCluster) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let client = server.client().unwrap();
    (
        shards_of(Api::<ConfigMap>::namespaced(client.clone(), ns())).await,
        shards_of(Api::<Secret>::namespaced(client, ns())).await,
    )
}

/// What the ring of `shards` assigns each ConfigMap to.
fn wanted(shards: &[&str]) -> BTreeMap<String, String> {
    assigned(shards, (0..OBJECTS).map(|i| format!("cm-{i}")))
}

/// What the ring of `shards` assigns each of the ConfigMaps `names` to.
fn assigned(shards: &[&str], names: impl IntoIterator<Item = String>) -> BTreeMap<String, String> {
    let ring = Ring::new(shards.iter().map(|s| ShardName::new(*s)));
    names
        .into_iter()
        .map(|name| {
            let shard = ring
                .assign(&ring_key("", "ConfigMap", ns(), &name))
                .unwrap();
            (name, shard.to_string())
        })
        .collect()
}

/// The names of the namespace's ConfigMaps that are not the test's: a whole cluster's root CA
/// ConfigMap, which the ring places (and moves) as well.
async fn others(client: &kube::Client) -> Vec<String> {
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns());
    let listed = maps.list(&ListParams::default()).await.unwrap();
    listed
        .items
        .into_iter()
        .filter(|map| !is_own_meta(&map.metadata))
        .filter_map(|map| map.metadata.name)
        .collect()
}

/// How many of the ConfigMaps `names` the ring of `after` places apart from the ring of `before`.
fn moves(names: &[String], before: &[&str], after: &[&str]) -> u64 {
    let from = assigned(before, names.iter().cloned());
    let to = assigned(after, names.iter().cloned());
    from.iter()
        .filter(|(name, shard)| to[*name] != **shard)
        .count() as u64
}

/// Waits until every ConfigMap is where the ring of `shards` wants it, every Secret is on its
/// owner's shard, no drain is pending, and each replica's cache holds exactly its ConfigMaps.
async fn settled(server: &TestCluster, replicas: &[(&str, &Replica)]) {
    let shards: Vec<&str> = replicas.iter().map(|(shard, _)| *shard).collect();
    let want = wanted(&shards);
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
    for (shard, replica) in replicas {
        let own: BTreeSet<String> = want
            .iter()
            .filter(|(_, wanted)| wanted == shard)
            .map(|(name, _)| name.clone())
            .collect();
        eventually(&format!("{shard} caches its objects only"), LIMIT, || {
            replica.cached() == own
        })
        .await;
        // Every object of the shard reconciled by it.
        for name in &own {
            eventually(&format!("{shard} reconciles {name}"), LIMIT, || {
                replica.reconciled.get(name) > 0
            })
            .await;
        }
    }
}

/// Creates the test's ConfigMaps, each with a Secret it owns.
async fn seed(client: &kube::Client) {
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns());
    let secrets: Api<Secret> = Api::namespaced(client.clone(), ns());
    for i in 0..OBJECTS {
        let map = maps
            .create(&PostParams::default(), &own_cm(&format!("cm-{i}"), "1"))
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
}

fn total(replicas: &[&Replica], counter: impl Fn(&Replica) -> u64) -> u64 {
    replicas.iter().map(|r| counter(r)).sum()
}

#[tokio::test]
async fn a_ring_assigns_drains_and_moves_objects_between_live_shards() {
    let server = TestCluster::start_with_faults().await.unwrap();
    let client = server.client().unwrap();
    seed(&client).await;

    // While the sharder cannot mark the shard Lease, the shard is not ready: it holds its Lease
    // and its objects, but has no word that it got its share.
    server
        .inject(FailRule::new("patch", "leases", 500, u32::MAX))
        .expect("a status fault is valid on either server");
    let s0 = start(&server, "s0").await;
    eventually("s0's sharder leading", LIMIT, || s0.sharder().passes > 0).await;
    eventually("s0 holding its Lease", LIMIT, || s0.manager.is_leader()).await;
    let (status, body) = s0.readyz().await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body.contains("waiting for the sharder to give it its share"),
        "{body}"
    );
    server.clear_faults();
    testkit::eventually_async("s0 ready", LIMIT, || async { s0.readyz().await.0 == 200 }).await;

    let s1 = start(&server, "s1").await;
    let s2 = start(&server, "s2").await;
    settled(&server, &[("s0", &s0), ("s1", &s1), ("s2", &s2)]).await;
    let before = wanted(&["s0", "s1", "s2"]);
    let shares: BTreeMap<&String, usize> = before.values().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(s).or_default() += 1;
        m
    });
    assert_eq!(shares.len(), 3, "every shard gets objects: {shares:?}");
    eventually("s1 given its share", LIMIT, || {
        s1.manager.shard().unwrap().member().is_assigned()
    })
    .await;
    let metrics = s1.manager.metrics().render();
    let own = format!(
        "kube_rt_shard_objects{{ring=\"{RING}\",shard=\"s1\",kind=\"ConfigMap\"}} {}",
        s1.manager
            .cache()
            .lister::<ConfigMap>()
            .unwrap()
            .list(&kube::core::Selector::default())
            .len()
    );
    assert!(metrics.contains(&own), "{own} in:\n{metrics}");
    assert!(metrics.contains("kube_rt_shard_assigned{ring=\"mirror\",shard=\"s1\"} 1"));

    // A shard joins: the objects the ring now wants on it leave their live shards by the drain
    // handshake only, each acknowledged by its shard before it is assigned again.
    let running = [&s0, &s1, &s2];
    let drains_before = total(&running, |r| r.sharder().drains);
    let acknowledged_before = total(&running, Replica::drains_acknowledged);
    let s3 = start(&server, "s3").await;
    settled(
        &server,
        &[("s0", &s0), ("s1", &s1), ("s2", &s2), ("s3", &s3)],
    )
    .await;
    testkit::eventually_async("s3 ready", LIMIT, || async { s3.readyz().await.0 == 200 }).await;
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
    // The ring moves the namespace's other ConfigMaps too: their drains count with the test's.
    let others_moved = moves(
        &others(&client).await,
        &["s0", "s1", "s2"],
        &["s0", "s1", "s2", "s3"],
    );
    let all = [&s0, &s1, &s2, &s3];
    // Objects that moved away left the old shards' caches as if deleted; no shard took that
    // for a deletion to reconcile.
    assert_eq!(
        total(&all, |r| r.deletions.total() as u64),
        0,
        "a move is not a deletion"
    );
    let drains = total(&all, |r| r.sharder().drains) - drains_before;
    let acknowledged = total(&all, Replica::drains_acknowledged) - acknowledged_before;
    assert_eq!(
        drains,
        moved + others_moved,
        "every move from a live shard is a drain"
    );
    assert_eq!(
        acknowledged,
        moved + others_moved,
        "and every drain was acknowledged by its shard"
    );

    // A shard leaves (its Lease released): its objects move at once, nothing else moves.
    let drains_before = total(&all, |r| r.sharder().drains);
    s1.stop().await;
    settled(&server, &[("s0", &s0), ("s2", &s2), ("s3", &s3)]).await;
    let rest = [&s0, &s2, &s3];
    assert_eq!(
        total(&rest, |r| r.sharder().drains),
        drains_before,
        "nothing is drained when a shard leaves"
    );

    // A shard dies silently: two Lease durations after its last renewal the sharder takes its
    // Lease over and moves its objects at once.
    let reassigned_before = total(&rest, |r| r.sharder().reassigned);
    s2.kill().await;
    settled(&server, &[("s0", &s0), ("s3", &s3)]).await;
    let alive = [&s0, &s3];
    assert_eq!(total(&alive, |r| r.sharder().drains), drains_before);
    assert!(total(&alive, |r| r.sharder().reassigned) > reassigned_before);
    let lease: k8s_openapi::api::coordination::v1::Lease = Api::namespaced(client.clone(), ns())
        .get("s2")
        .await
        .unwrap();
    let holder = lease.spec.and_then(|spec| spec.holder_identity);
    assert_eq!(
        holder.as_deref(),
        Some("sharder/s0"),
        "the sharder holds the dead shard's Lease"
    );

    // The policy holds what the shard and the sharder need.
    let policy = s0.manager.permissions();
    let verbs_on = |resource: &str| -> Vec<Verb> {
        policy
            .iter()
            .filter(|rule| rule.resource_name() == resource)
            .flat_map(|rule| rule.verb_set().iter().copied())
            .collect()
    };
    for kind in ["configmaps", "secrets"] {
        for verb in [Verb::List, Verb::Watch, Verb::Patch] {
            assert!(verbs_on(kind).contains(&verb), "{kind} need {verb:?}");
        }
    }
    for verb in Verb::ALL
        .into_iter()
        .filter(|verb| *verb != Verb::DeleteCollection)
    {
        assert!(verbs_on("leases").contains(&verb), "leases need {verb:?}");
    }
    // And nothing more: Leases only in the ring's namespace; otherwise only what the
    // controller needs unsharded (its kinds, the owner's finalizers, its events).
    for rule in &policy {
        if rule.resource_name() == "leases" {
            assert_eq!(rule.namespace(), Some(ns()), "{rule:?}");
        }
        if ![
            "configmaps",
            "configmaps/finalizers",
            "secrets",
            "leases",
            "events",
        ]
        .contains(&rule.resource_name())
        {
            panic!("a rule sharding does not need: {rule:?}");
        }
    }

    for replica in [s0, s3] {
        replica.stop().await;
    }
    server.shutdown().await;
}
