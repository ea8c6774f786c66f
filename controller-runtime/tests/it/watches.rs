//! `watches` mappers, per-watch and global predicates, manager namespace and selector scoping,
//! and a failing runnable stopping the manager. Runs on the simulator and, with
//! `KUBE_RT_TEST_KUBECONFIG` set, against that cluster (through a fault proxy where the test
//! injects faults).

use crate::common;

use std::convert::Infallible;
use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{self, ByObject};
use controller_runtime::controller::predicate::{LabelSelector, ResourceVersionChanged, not};
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use controller_runtime::manager::{Error, Runnable, async_trait};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::Selector;
use testkit::fault::InjectFaults;
use tokio_util::sync::CancellationToken;

fn counting(counts: &Counts) -> impl controller_runtime::controller::Reconciler<ConfigMap> {
    let seen = counts.clone();
    reconciler_fn(move |req: Request, _ctx: Context<ConfigMap>| {
        let seen = seen.clone();
        async move {
            seen.hit(&req.to_string());
            Ok::<_, Infallible>(Action::done())
        }
    })
}

fn labelled(mut secret: k8s_openapi::api::core::v1::Secret, key: &str, value: &str) -> Secret {
    secret.metadata.labels = Some([(key.to_owned(), value.to_owned())].into());
    secret
}

/// `secret` with the label `key=value` added to its labels.
fn labelled_too(mut secret: Secret, key: &str, value: &str) -> Secret {
    secret
        .metadata
        .labels
        .get_or_insert_default()
        .insert(key.to_owned(), value.to_owned());
    secret
}

#[tokio::test(start_paused = true)]
async fn mappers_and_predicates_choose_the_requests() {
    let server = TestCluster::start_with_faults().await.unwrap();
    let key = |name: &str| format!("{}/{name}", ns());
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    let only_labelled = LabelSelector([("watched", "yes")].into_iter().collect::<Selector>());
    Controller::new(&manager)
        // Config maps labelled `ignored=yes` are never reconciled.
        .for_(
            Watch::of::<ConfigMap>()
                .predicate(own_only())
                .predicate(not(LabelSelector(
                    [("ignored", "yes")].into_iter().collect::<Selector>(),
                ))),
        )
        // Nothing for resyncs and relists of unchanged objects.
        .with_event_filter(ResourceVersionChanged)
        // A Secret labelled `config=<name>` requests the config maps `<name>` and `<name>-copy`,
        // but only Secrets labelled `watched=yes` count.
        .watches(
            Watch::of::<Secret>().predicate(only_labelled),
            |secret: &Secret| {
                let name = secret
                    .metadata
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("config"))
                    .cloned();
                name.into_iter()
                    .flat_map(|name| [name.clone(), format!("{name}-copy")])
                    .filter_map(|name| ObjectKey::namespaced(ns(), &name).ok())
                    .collect::<Vec<_>>()
            },
        )
        .build(counting(&counts))
        .unwrap();
    let running = spawn(&manager);

    server.create(&own_cm("ignored", "1")).await.unwrap();
    let mut ignored = own_cm("ignored-2", "1");
    ignored
        .metadata
        .labels
        .get_or_insert_default()
        .insert("ignored".to_owned(), "yes".to_owned());
    server.create(&ignored).await.unwrap();
    eventually("the unlabelled config map", Duration::from_secs(30), || {
        counts.get(&key("ignored")) == 1
    })
    .await;

    let unwatched = labelled(secret("unwatched", vec![]), "config", "app");
    server.create(&unwatched).await.unwrap();
    let mut watched = labelled(secret("watched", vec![]), "config", "app");
    watched
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("watched".into(), "yes".into());
    server.create(&watched).await.unwrap();
    eventually("both mapped requests", Duration::from_secs(30), || {
        counts.get(&key("app")) == 1 && counts.get(&key("app-copy")) == 1
    })
    .await;
    assert_eq!(counts.get(&key("ignored-2")), 0);
    assert_eq!(counts.total(), 3, "the unwatched secret requested nothing");

    // A relist re-delivers every object unchanged: filtered by ResourceVersionChanged. Every
    // re-watch fails until the history is compacted, so the informers relist.
    server
        .inject(FailRule::random("watch", "*", 500, 1.0, 1))
        .expect("a status fault is valid on either server");
    server.drop_watches();
    server.compact().await.unwrap();
    server.clear_faults();
    // Sentinels after the relists, named to come last in them: each handler sees its events in
    // order, so once both are reconciled, the relisted objects have been handled.
    server.create(&own_cm("zz-sentinel", "1")).await.unwrap();
    let sentinel = labelled(secret("zz-sentinel", vec![]), "watched", "yes");
    let sentinel = labelled_too(sentinel, "config", "zz-mapped");
    server.create(&sentinel).await.unwrap();
    eventually("the sentinels", Duration::from_secs(30), || {
        ["zz-sentinel", "zz-mapped", "zz-mapped-copy"]
            .iter()
            .all(|name| counts.get(&key(name)) == 1)
    })
    .await;
    assert_eq!(counts.total(), 6, "{counts:?}");

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_manager_scopes_its_caches() {
    let server = TestCluster::start().await.unwrap();
    // A namespace of the test's own (deleted at cleanup on a real server).
    let other = format!("{}-other", ns());
    let mut namespace = k8s_openapi::api::core::v1::Namespace::default();
    namespace.metadata.name = Some(other.clone());
    server.create(&namespace).await.unwrap();
    let mut elsewhere = cm("elsewhere", "1");
    elsewhere.metadata.namespace = Some(other);
    server.create(&elsewhere).await.unwrap();
    let mut selected = cm("selected", "1");
    selected.metadata.labels = Some([("team".to_owned(), "a".to_owned())].into());
    server.create(&selected).await.unwrap();
    server.create(&cm("unselected", "1")).await.unwrap();

    let manager = Arc::new(
        manager(&server)
            .namespace(ns())
            .by_object(ByObject::of::<ConfigMap>().labels("team=a"))
            .build(),
    );
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(counting(&counts))
        .unwrap();
    let running = spawn(&manager);
    eventually("the selected config map", Duration::from_secs(30), || {
        counts.get(&format!("{}/selected", ns())) == 1
    })
    .await;
    // The workers started once the cache had synced: what it holds is all there is to
    // reconcile.
    assert_eq!(counts.total(), 1);
    let cached = manager
        .cache()
        .lister::<ConfigMap>()
        .unwrap()
        .list(&Selector::default());
    assert_eq!(cached.len(), 1);
    assert!(matches!(
        manager.cache().lister::<Secret>(),
        Err(cache::Error::NotCached(_))
    ));

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

struct Failing;

#[async_trait]
impl Runnable for Failing {
    fn name(&self) -> &str {
        "failing"
    }

    async fn run(
        self: Box<Self>,
        _shutdown: CancellationToken,
    ) -> Result<(), Box<dyn StdError + Send + Sync>> {
        tokio::time::sleep(Duration::from_secs(1)).await;
        Err("port already in use".into())
    }
}

#[tokio::test(start_paused = true)]
async fn a_failing_runnable_stops_the_manager() {
    let server = TestCluster::start().await.unwrap();
    let manager = manager(&server).build();
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(counting(&counts))
        .unwrap();
    manager.add(Failing).unwrap();
    let error = manager.start().await.unwrap_err();
    assert!(
        matches!(error, Error::Runnable { ref name, .. } if name == "failing"),
        "{error}"
    );
    assert!(error.to_string().contains("port already in use"));
    assert!(matches!(manager.start().await, Err(Error::AlreadyStarted)));
    server.shutdown().await;
}
