//! Kinds added late: a CRD installed after the manager started gets its controller (the
//! manager waits until the kind is served, the informer syncs, then the workers start);
//! removing controllers stops the informers no one uses; lazy reads start an informer on first
//! use, with a timeout error naming the kind. Runs on the simulator and, with
//! `KUBE_RT_TEST_KUBECONFIG` set, against that cluster (through a fault proxy where the test
//! counts open watches).

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::cache;
use controller_runtime::controller::{
    self, Action, Context, Controller, Reconciler, Request, Watch, reconciler_fn,
};
use controller_runtime::manager::{Error, Manager};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use testkit::fault::InjectFaults;

/// A kind whose CRD the tests install after the manager started.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "late.kube-rt.dev",
    version = "v1",
    kind = "Widget",
    namespaced
)]
pub struct WidgetSpec {
    size: i32,
}

/// A kind no test installs: never served.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "late.kube-rt.dev",
    version = "v1",
    kind = "Phantom",
    namespaced
)]
pub struct PhantomSpec {
    size: i32,
}

/// The cache sync timeout of the tests' managers: five seconds of the simulator's paused
/// clock, one real second on a real server.
fn sync_timeout(server: &TestCluster) -> Duration {
    match server.sim() {
        Some(_) => Duration::from_secs(5),
        None => Duration::from_secs(1),
    }
}

fn counting<K: controller_runtime::cache::Kind>(counts: &Counts) -> impl Reconciler<K> {
    let seen = counts.clone();
    reconciler_fn(move |req: Request, _ctx: Context<K>| {
        let seen = seen.clone();
        async move {
            seen.hit(&req.to_string());
            Ok::<_, Infallible>(Action::done())
        }
    })
}

async fn create_widget(widgets: &Api<Widget>, name: &str) {
    let widget = Widget {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        spec: WidgetSpec { size: 1 },
    };
    widgets
        .create(&PostParams::default(), &widget)
        .await
        .unwrap();
}

/// A started manager whose ConfigMap controller has synced.
async fn running_manager(
    server: &TestCluster,
) -> (
    Arc<Manager>,
    tokio::task::JoinHandle<Result<(), Error>>,
    Counts,
) {
    let manager = Arc::new(
        manager(server)
            .cache_sync_timeout(sync_timeout(server))
            .build(),
    );
    let counts = Counts::default();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(counting::<ConfigMap>(&counts))
        .unwrap();
    let running = spawn(&manager);
    eventually("the manager synced", Duration::from_secs(30), || {
        manager.has_synced()
    })
    .await;
    (manager, running, counts)
}

#[tokio::test(start_paused = true)]
async fn a_crd_installed_after_start_gets_its_controller_and_removal_stops_its_watch() {
    let server = TestCluster::start_with_faults().await.unwrap();
    let key = |name: &str| format!("{}/{name}", ns());
    let (manager, running, counts) = running_manager(&server).await;

    // Not served yet: a typed error naming the kind.
    let error = manager
        .cache()
        .wait_for_kind::<Widget>(Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(
        matches!(&error, cache::Error::KindNotServed { kind, waited: Some(_) } if kind.contains("Widget")),
        "{error}"
    );
    assert!(
        error.to_string().contains("CustomResourceDefinition"),
        "{error}"
    );

    // Deleted at cleanup on a real server.
    server.create(&Widget::crd()).await.unwrap();
    manager
        .cache()
        .wait_for_kind::<Widget>(Duration::from_secs(30))
        .await
        .unwrap();
    let widgets: Api<Widget> = Api::namespaced(server.client().unwrap(), ns());
    create_widget(&widgets, "w1").await;
    let watches_before = server.open_watches();

    // Two controllers for the late kind, added to the running manager.
    let (first, second) = (Counts::default(), Counts::default());
    Controller::new(&manager)
        .for_(Watch::of::<Widget>())
        .named("widgets-a")
        .build(counting::<Widget>(&first))
        .unwrap();
    Controller::new(&manager)
        .for_(Watch::of::<Widget>())
        .named("widgets-b")
        .build(counting::<Widget>(&second))
        .unwrap();
    eventually("w1 reconciled by both", Duration::from_secs(30), || {
        first.get(&key("w1")) == 1 && second.get(&key("w1")) == 1
    })
    .await;
    create_widget(&widgets, "w2").await;
    eventually("w2 reconciled by both", Duration::from_secs(30), || {
        first.get(&key("w2")) == 1 && second.get(&key("w2")) == 1
    })
    .await;
    assert_eq!(
        server.open_watches(),
        watches_before + 1,
        "one watch shared by both"
    );
    assert_eq!(
        manager.controller_names(),
        ["configmap", "widgets-a", "widgets-b"]
    );

    // Removing one keeps the watch for the other; removing both stops it.
    manager.remove_controller("widgets-a").await.unwrap();
    create_widget(&widgets, "w3").await;
    eventually(
        "w3 reconciled by the remaining one",
        Duration::from_secs(30),
        || second.get(&key("w3")) == 1,
    )
    .await;
    assert_eq!(first.get(&key("w3")), 0);
    assert!(manager.cache().lister::<Widget>().is_ok());
    manager.remove_controller("widgets-b").await.unwrap();
    eventually("the widget watch closed", Duration::from_secs(30), || {
        server.open_watches() == watches_before
    })
    .await;
    assert!(matches!(
        manager.cache().lister::<Widget>(),
        Err(cache::Error::NotCached(_))
    ));
    assert!(matches!(
        manager.remove_controller("widgets-b").await,
        Err(Error::UnknownController(name)) if name == "widgets-b"
    ));

    // The manager kept running: its first controller still reconciles.
    server.put_own("after", "1").await.unwrap();
    eventually(
        "the ConfigMap controller still runs",
        Duration::from_secs(30),
        || counts.get(&key("after")) == 1,
    )
    .await;

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    assert!(matches!(
        Controller::new(&manager)
            .for_(Watch::of::<Widget>())
            .named("too-late")
            .build(counting::<Widget>(&first)),
        Err(controller::Error::ManagerStopped)
    ));
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_lazy_read_starts_the_informer_and_waits_for_its_sync() {
    let server = TestCluster::start().await.unwrap();
    let secrets: Api<Secret> = Api::namespaced(server.client().unwrap(), ns());
    secrets
        .create(&PostParams::default(), &secret("token", Vec::new()))
        .await
        .unwrap();
    let idle = Arc::new(manager(&server).build());
    assert!(matches!(
        idle.cache().lazy_lister::<Secret>().await,
        Err(cache::Error::NotStarted(kind)) if kind.contains("Secret")
    ));

    let (manager, running, _counts) = running_manager(&server).await;
    assert!(matches!(
        manager.cache().lister::<Secret>(),
        Err(cache::Error::NotCached(_))
    ));
    let lister = manager.cache().lazy_lister::<Secret>().await.unwrap();
    assert!(lister.has_synced());
    assert!(lister.namespace(ns()).get("token").unwrap().is_some());
    // From now on the plain lister reads it too, and so does a second lazy read.
    assert_eq!(manager.cache().lister::<Secret>().unwrap().len(), 1);
    assert!(manager.cache().lazy_lister::<Secret>().await.is_ok());

    // A kind the server does not serve never syncs: the read times out, naming the kind.
    let error = manager.cache().lazy_lister::<Phantom>().await.unwrap_err();
    let limit = sync_timeout(&server);
    assert!(
        matches!(&error, cache::Error::LazySyncTimeout { kind, timeout } if kind.contains("Phantom") && *timeout == limit),
        "{error}"
    );
    assert!(
        error
            .to_string()
            .contains(&format!("did not sync within {limit:?}")),
        "{error}"
    );
    assert!(!running.is_finished(), "the manager keeps running");

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
