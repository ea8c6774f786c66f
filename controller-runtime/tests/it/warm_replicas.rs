//! Warm replicas (controller-runtime#3192): two managers elect on one Lease; the standby's
//! controller is built with `warm_up(true)` or not. The leader is killed (its task aborted: no
//! release, the standby waits out the lease). A warm standby listed and watched while it did not
//! lead, reconciled nothing then, and after the takeover reconciles every object without a list
//! of its own (no list or watch request at all: its watch from before goes on); a cold one lists
//! only once it leads. A list here is either kind of request a reflector lists with: a paged list
//! or a streaming list (a watch with initial events). Runs on the simulator (paused time) and, with
//! `KUBE_RT_TEST_KUBECONFIG` set, against that cluster.

use crate::common;

use std::collections::BTreeSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::*;
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use controller_runtime::leader_election::LeaderElectionConfig;
use controller_runtime::manager::{Error, Manager};
use informer::SharedIndexInformer;
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tokio::task::JoinHandle;

/// Objects the controllers reconcile.
const OBJECTS: usize = 20;

/// One reconcile as a replica saw it.
#[derive(Debug, Clone)]
struct Reconciled {
    key: String,
    /// Whether the replica led when it started.
    leading: bool,
    /// List and watch requests its ConfigMap informers had made by then.
    requests: u64,
}

/// The list and watch requests `informers` made (a streaming list counts as a watch).
fn requests(informers: &[Arc<SharedIndexInformer<ConfigMap>>]) -> u64 {
    informers
        .iter()
        .map(|informer| informer.list_count() + informer.watch_count())
        .sum()
}

/// A manager electing on `lease`, with one ConfigMap controller that warms up or not.
struct Replica {
    manager: Arc<Manager>,
    running: JoinHandle<Result<(), Error>>,
    informers: Vec<Arc<SharedIndexInformer<ConfigMap>>>,
    reconciles: Arc<Mutex<Vec<Reconciled>>>,
}

impl Replica {
    fn start(server: &TestCluster, id: &str, lease: &str, warm: bool) -> Self {
        let leading = Arc::new(AtomicBool::new(false));
        let (started, stopped) = (leading.clone(), leading.clone());
        let config = LeaderElectionConfig::new(ns(), lease)
            .identity(id)
            .lease_duration(Duration::from_secs(6))
            .renew_deadline(Duration::from_secs(4))
            .retry_period(Duration::from_secs(1))
            .on_started_leading(move || started.store(true, Ordering::SeqCst))
            .on_stopped_leading(move || stopped.store(false, Ordering::SeqCst));
        let manager = Arc::new(manager(server).leader_election(config).build());
        let informers = manager.cache().informers::<ConfigMap>().unwrap();
        let reconciles = Arc::new(Mutex::new(Vec::new()));
        let (seen, lists) = (reconciles.clone(), informers.clone());
        Controller::new(&manager)
            .for_(Watch::of::<ConfigMap>())
            .warm_up(warm)
            .build(reconciler_fn(
                move |req: Request, _ctx: Context<ConfigMap>| {
                    seen.lock().push(Reconciled {
                        key: req.name().to_owned(),
                        leading: leading.load(Ordering::SeqCst),
                        requests: requests(&lists),
                    });
                    async { Ok::<_, Infallible>(Action::done()) }
                },
            ))
            .unwrap();
        let running = spawn(&manager);
        Self {
            manager,
            running,
            informers,
            reconciles,
        }
    }

    fn requests(&self) -> u64 {
        requests(&self.informers)
    }

    fn synced(&self) -> bool {
        self.informers.iter().all(|i| i.has_synced())
    }

    /// Whether every test object was reconciled.
    fn reconciled_all(&self) -> bool {
        let keys: BTreeSet<String> = self
            .reconciles
            .lock()
            .iter()
            .map(|r| r.key.clone())
            .collect();
        (0..OBJECTS).all(|i| keys.contains(&format!("warm-{i}")))
    }
}

/// What the standby showed around the takeover.
struct Takeover {
    /// List and watch requests its informers had made when the leader was killed.
    requests_at_kill: u64,
    /// Its reconciles, in order.
    reconciles: Vec<Reconciled>,
}

/// Leader, then a standby (warm or cold); kills the leader and waits until the standby leads and
/// reconciled every object.
async fn take_over(server: &TestCluster, warm: bool) -> Takeover {
    for i in 0..OBJECTS {
        server.create(&cm(&format!("warm-{i}"), "1")).await.unwrap();
    }
    let lease = format!("warm-{warm}-{}", std::process::id());
    let leader = Replica::start(server, "leader", &lease, false);
    eventually("the leader reconciling", Duration::from_secs(60), || {
        leader.manager.is_leader() && leader.reconciled_all()
    })
    .await;
    let standby = Replica::start(server, "standby", &lease, warm);
    if warm {
        eventually("the warm standby's cache", Duration::from_secs(60), || {
            standby.synced()
        })
        .await;
    }
    eventually(
        "the standby seeing the leader",
        Duration::from_secs(60),
        || standby.manager.elector().unwrap().leader().as_deref() == Some("leader"),
    )
    .await;
    assert!(!standby.manager.is_leader());
    let requests_at_kill = standby.requests();

    leader.running.abort();
    let _ = leader.running.await;
    eventually("the standby taking over", Duration::from_secs(60), || {
        standby.manager.is_leader() && standby.reconciled_all()
    })
    .await;
    let reconciles = standby.reconciles.lock().clone();
    standby.manager.shutdown_handle().shutdown();
    standby.running.await.unwrap().unwrap();
    Takeover {
        requests_at_kill,
        reconciles,
    }
}

#[tokio::test(start_paused = true)]
async fn a_warm_standby_takes_over_a_killed_leader_without_a_list() {
    let server = TestCluster::start().await.unwrap();
    let takeover = take_over(&server, true).await;
    assert!(
        takeover.requests_at_kill >= 1,
        "the standby listed before leading"
    );
    assert!(
        takeover.reconciles.iter().all(|r| r.leading),
        "a standby reconciled: {:?}",
        takeover.reconciles
    );
    let first = &takeover.reconciles[0];
    assert_eq!(
        first.requests, takeover.requests_at_kill,
        "the first reconcile after the takeover waited for a list"
    );
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_cold_standby_lists_only_once_it_leads() {
    let server = TestCluster::start().await.unwrap();
    let takeover = take_over(&server, false).await;
    assert_eq!(
        takeover.requests_at_kill, 0,
        "a cold standby caches nothing"
    );
    assert!(takeover.reconciles.iter().all(|r| r.leading));
    assert!(
        takeover.reconciles[0].requests >= 1,
        "its first reconcile came after its list"
    );
    server.shutdown().await;
}
