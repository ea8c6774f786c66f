//! `watches` mappers, per-watch and global predicates, manager namespace and selector scoping,
//! and a failing runnable stopping the manager.

use crate::common;

use std::convert::Infallible;
use std::error::Error as StdError;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{self, ByObject};
use controller_runtime::controller::predicate::{LabelSelector, ResourceVersionChanged, not};
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use controller_runtime::manager::{Error, Runnable, async_trait};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::core::Selector;
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

#[tokio::test(start_paused = true)]
async fn mappers_and_predicates_choose_the_requests() {
    if testkit::cluster::sim_only("virtual time, fault injection") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let counts = Counts::default();
    let only_labelled = LabelSelector([("watched", "yes")].into_iter().collect::<Selector>());
    Controller::new(&manager)
        // Config maps labelled `ignored=yes` are never reconciled.
        .for_(Watch::of::<ConfigMap>().predicate(not(LabelSelector(
            [("ignored", "yes")].into_iter().collect::<Selector>(),
        ))))
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
                    .filter_map(|name| ObjectKey::namespaced(NS, &name).ok())
                    .collect::<Vec<_>>()
            },
        )
        .build(counting(&counts))
        .unwrap();
    let running = spawn(&manager);

    server.create(&cm("ignored", "1")).map(|_| ()).unwrap();
    let mut ignored = cm("ignored-2", "1");
    ignored.metadata.labels = Some([("ignored".to_owned(), "yes".to_owned())].into());
    server.create(&ignored).unwrap();
    eventually("the unlabelled config map", Duration::from_secs(30), || {
        counts.get("default/ignored") == 1
    })
    .await;

    let unwatched = labelled(secret("unwatched", vec![]), "config", "app");
    server.create(&unwatched).unwrap();
    let mut watched = labelled(secret("watched", vec![]), "config", "app");
    watched
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("watched".into(), "yes".into());
    server.create(&watched).unwrap();
    eventually("both mapped requests", Duration::from_secs(30), || {
        counts.get("default/app") == 1 && counts.get("default/app-copy") == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(counts.get("default/ignored-2"), 0);
    assert_eq!(counts.total(), 3, "the unwatched secret requested nothing");

    // A relist re-delivers every object unchanged: filtered by ResourceVersionChanged.
    server.drop_watches();
    server.compact();
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(counts.total(), 3);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn the_manager_scopes_its_caches() {
    if testkit::cluster::sim_only("virtual time") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let mut ns = k8s_openapi::api::core::v1::Namespace::default();
    ns.metadata.name = Some("other".into());
    server.create(&ns).unwrap();
    let mut elsewhere = cm("elsewhere", "1");
    elsewhere.metadata.namespace = Some("other".into());
    server.create(&elsewhere).unwrap();
    let mut selected = cm("selected", "1");
    selected.metadata.labels = Some([("team".to_owned(), "a".to_owned())].into());
    server.create(&selected).unwrap();
    server.create(&cm("unselected", "1")).unwrap();

    let manager = Arc::new(
        manager(&server)
            .namespace(NS)
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
        counts.get("default/selected") == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
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
