//! Ports of sample-controller's controller_test.go: `sync_handler` is called directly with
//! pre-filled listers (no informers), and the writes it makes are read from the server's
//! request counts (the simulator's own, or the fault proxy's in front of a real server), as
//! the Go fixture lists its fake clientset's actions.

use std::sync::Arc;

use indexer::{Indexer, Indexers, Lister, ObjectKey, Store};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use testkit::cluster::{Server, TestCluster, ns};
use testkit::fault::InjectFaults;

use crate::sample_controller::controller::{
    AGENT_NAME, SampleController, SyncError, new_deployment,
};
use crate::sample_controller::foo::{Foo, crd, new_foo};
use crate::sample_controller::recorder::Recorder;

/// The Go fixture: Foos and Deployments in the server and in the listers.
struct Fixture {
    server: TestCluster,
    foos: Indexer<Foo>,
    deployments: Indexer<Deployment>,
}

impl Fixture {
    /// A server with the Foo CRD (behind the fault proxy on a real server, which counts the
    /// requests).
    async fn new() -> Self {
        let server = TestCluster::start_with_faults().await.unwrap();
        server.install_test_crd(&crd()).await.unwrap();
        Self {
            server,
            foos: Indexer::new(Indexers::default()),
            deployments: Indexer::new(Indexers::default()),
        }
    }

    /// A Foo `name` whose Deployment is `<name>-deployment`, stored and cached.
    async fn foo(&self, name: &str, replicas: i32) -> Foo {
        self.store_foo(new_foo(name, &format!("{name}-deployment"), Some(replicas)))
            .await
    }

    /// `foo` in the test namespace, stored and cached.
    async fn store_foo(&self, mut foo: Foo) -> Foo {
        foo.metadata.namespace = Some(ns().into());
        let stored = self.server.create(&foo).await.unwrap();
        self.foos.add(Arc::new(stored.clone())).unwrap();
        stored
    }

    async fn deployment(&self, deployment: Deployment) {
        let stored = self.server.create(&deployment).await.unwrap();
        self.deployments.add(Arc::new(stored)).unwrap();
    }

    async fn sync(&self, foo: &Foo) -> Result<(), SyncError> {
        let client = self.server.client().unwrap();
        let controller = SampleController::new(client.clone(), Recorder::new(client, AGENT_NAME));
        self.server.reset_request_counts();
        let key = ObjectKey::new(Some(ns()), foo.metadata.name.as_deref().unwrap()).unwrap();
        let cached = self.foos.get_by_key(&key);
        controller
            .sync_handler(&key, cached, &Lister::new(self.deployments.clone()))
            .await
    }

    /// (deployment creates, deployment updates, Foo status updates) since the sync began.
    fn actions(&self) -> (u64, u64, u64) {
        (
            self.server.request_count("create", "deployments"),
            self.server.request_count("update", "deployments"),
            self.server.request_count("update", "foos/status"),
        )
    }

    async fn deployments(&self) -> Vec<Deployment> {
        self.server.list::<Deployment>().await.unwrap()
    }

    /// The Events about Foos (on a whole cluster its controllers record their own too).
    async fn foo_events(&self) -> Vec<Event> {
        let events = self.server.list::<Event>().await.unwrap();
        events
            .into_iter()
            .filter(|event| event.involved_object.kind.as_deref() == Some("Foo"))
            .collect()
    }

    async fn event_reasons(&self) -> Vec<String> {
        let events = self.foo_events().await;
        events
            .into_iter()
            .filter_map(|event| event.reason)
            .collect()
    }
}

#[tokio::test]
async fn creates_deployment() {
    let fixture = Fixture::new().await;
    let foo = fixture.foo("test", 1).await;
    fixture.sync(&foo).await.unwrap();
    assert_eq!(fixture.actions(), (1, 0, 1));
    let deployments = fixture.deployments().await;
    assert_eq!(deployments.len(), 1);
    let created = &deployments[0];
    assert_eq!(created.metadata.name.as_deref(), Some("test-deployment"));
    let owner = &created.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (
            owner.kind.as_str(),
            owner.name.as_str(),
            owner.controller,
            owner.block_owner_deletion
        ),
        ("Foo", "test", Some(true), Some(true))
    );
    assert_eq!(fixture.event_reasons().await, ["Synced"]);
}

#[tokio::test]
async fn do_nothing() {
    let fixture = Fixture::new().await;
    let foo = fixture.foo("test", 1).await;
    fixture.deployment(new_deployment(&foo)).await;
    fixture.sync(&foo).await.unwrap();
    assert_eq!(fixture.actions(), (0, 0, 1));
}

#[tokio::test]
async fn update_deployment() {
    let fixture = Fixture::new().await;
    let foo = fixture.foo("test", 2).await;
    let mut outdated = new_deployment(&foo);
    outdated.spec.replicas = Some(1);
    fixture.deployment(outdated).await;
    fixture.sync(&foo).await.unwrap();
    assert_eq!(fixture.actions(), (0, 1, 1));
    let deployment = &fixture.deployments().await[0];
    assert_eq!(deployment.spec.replicas, Some(2));
}

#[tokio::test]
async fn not_controlled_by_us() {
    let fixture = Fixture::new().await;
    let foo = fixture.foo("test", 1).await;
    let mut foreign = new_deployment(&foo);
    foreign.metadata.owner_references = None;
    fixture.deployment(foreign).await;
    let error = fixture.sync(&foo).await.unwrap_err();
    assert!(matches!(error, SyncError::ResourceExists(_)), "{error}");
    assert_eq!(
        error.to_string(),
        r#"Resource "test-deployment" already exists and is not managed by Foo"#
    );
    assert_eq!(fixture.actions(), (0, 0, 0));
    let warning = fixture
        .foo_events()
        .await
        .into_iter()
        .find(|event| event.reason.as_deref() == Some("ErrResourceExists"))
        .unwrap();
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.message.as_deref(), Some(error.to_string().as_str()));
}

#[tokio::test]
async fn missing_deployment_name_is_dropped_without_retry() {
    let fixture = Fixture::new().await;
    let stored = fixture.store_foo(new_foo("nameless", "", Some(1))).await;
    fixture.sync(&stored).await.unwrap();
    assert_eq!(fixture.actions(), (0, 0, 0));
}

#[tokio::test]
async fn missing_foo_is_dropped() {
    let fixture = Fixture::new().await;
    let mut gone = new_foo("gone", "gone-deployment", Some(1));
    gone.metadata.namespace = Some(ns().into());
    fixture.sync(&gone).await.unwrap();
    assert_eq!(fixture.actions(), (0, 0, 0));
    assert!(fixture.event_reasons().await.is_empty());
}
