//! Ports of sample-controller's controller_test.go: `sync_handler` is called directly with
//! pre-filled listers (no informers), and the writes it makes are read from the simulator's
//! request counts.

use std::sync::Arc;

use indexer::{Indexer, Indexers, Lister, ObjectKey, Store};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use testenv::TestEnv;

use crate::sample_controller::controller::{
    AGENT_NAME, SampleController, SyncError, new_deployment,
};
use crate::sample_controller::foo::{Foo, crd, new_foo};
use crate::sample_controller::recorder::Recorder;

/// The Go fixture: Foos and Deployments in the server and in the listers.
struct Fixture {
    env: TestEnv,
    foos: Indexer<Foo>,
    deployments: Indexer<Deployment>,
}

impl Fixture {
    /// `None` on an existing cluster: the fixture counts the requests a sync makes, as the Go
    /// fixture lists its fake clientset's actions, which only the simulator can.
    async fn new() -> Option<Self> {
        let env = TestEnv::builder()
            .crd(crd())
            .require_simulator("request counts (the Go fixture's list of actions)")
            .start_or_skip()
            .await
            .unwrap()?;
        Some(Self {
            env,
            foos: Indexer::new(Indexers::default()),
            deployments: Indexer::new(Indexers::default()),
        })
    }

    fn server(&self) -> &apiserver_sim::ApiServer {
        self.env
            .simulator()
            .expect("the fixture runs on the simulator")
    }

    /// A Foo `name` in `default` whose Deployment is `<name>-deployment`, stored and cached.
    fn foo(&self, name: &str, replicas: i32) -> Foo {
        let mut foo = new_foo(name, &format!("{name}-deployment"), Some(replicas));
        foo.metadata.namespace = Some("default".into());
        let stored = self.server().create(&foo).unwrap();
        self.foos.add(Arc::new(stored.clone())).unwrap();
        stored
    }

    fn deployment(&self, deployment: Deployment) {
        let stored = self.server().create(&deployment).unwrap();
        self.deployments.add(Arc::new(stored)).unwrap();
    }

    async fn sync(&self, foo: &Foo) -> Result<(), SyncError> {
        let client = self.env.client();
        let controller = SampleController::new(client.clone(), Recorder::new(client, AGENT_NAME));
        self.server().reset_request_counts();
        let key = ObjectKey::new(Some("default"), foo.metadata.name.as_deref().unwrap()).unwrap();
        let cached = self.foos.get_by_key(&key);
        controller
            .sync_handler(&key, cached, &Lister::new(self.deployments.clone()))
            .await
    }

    /// (deployment creates, deployment updates, Foo status updates) since the sync began.
    fn actions(&self) -> (u64, u64, u64) {
        (
            self.server().request_count("create", "deployments"),
            self.server().request_count("update", "deployments"),
            self.server().request_count("update", "foos/status"),
        )
    }

    fn event_reasons(&self) -> Vec<String> {
        self.server()
            .list::<Event>()
            .into_iter()
            .filter_map(|event| event.reason)
            .collect()
    }
}

#[tokio::test]
async fn creates_deployment() {
    let Some(fixture) = Fixture::new().await else {
        return;
    };
    let foo = fixture.foo("test", 1);
    fixture.sync(&foo).await.unwrap();
    assert_eq!(fixture.actions(), (1, 0, 1));
    let deployments = fixture.server().list::<Deployment>();
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
    assert_eq!(fixture.event_reasons(), ["Synced"]);
}

#[tokio::test]
async fn do_nothing() {
    let Some(fixture) = Fixture::new().await else {
        return;
    };
    let foo = fixture.foo("test", 1);
    fixture.deployment(new_deployment(&foo));
    fixture.sync(&foo).await.unwrap();
    assert_eq!(fixture.actions(), (0, 0, 1));
}

#[tokio::test]
async fn update_deployment() {
    let Some(fixture) = Fixture::new().await else {
        return;
    };
    let foo = fixture.foo("test", 2);
    let mut outdated = new_deployment(&foo);
    outdated.spec.replicas = Some(1);
    fixture.deployment(outdated);
    fixture.sync(&foo).await.unwrap();
    assert_eq!(fixture.actions(), (0, 1, 1));
    let deployment = &fixture.server().list::<Deployment>()[0];
    assert_eq!(deployment.spec.replicas, Some(2));
}

#[tokio::test]
async fn not_controlled_by_us() {
    let Some(fixture) = Fixture::new().await else {
        return;
    };
    let foo = fixture.foo("test", 1);
    let mut foreign = new_deployment(&foo);
    foreign.metadata.owner_references = None;
    fixture.deployment(foreign);
    let error = fixture.sync(&foo).await.unwrap_err();
    assert!(matches!(error, SyncError::ResourceExists(_)), "{error}");
    assert_eq!(
        error.to_string(),
        r#"Resource "test-deployment" already exists and is not managed by Foo"#
    );
    assert_eq!(fixture.actions(), (0, 0, 0));
    let warning = fixture
        .server()
        .list::<Event>()
        .into_iter()
        .find(|event| event.reason.as_deref() == Some("ErrResourceExists"))
        .unwrap();
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    assert_eq!(warning.message.as_deref(), Some(error.to_string().as_str()));
}

#[tokio::test]
async fn missing_deployment_name_is_dropped_without_retry() {
    let Some(fixture) = Fixture::new().await else {
        return;
    };
    let mut foo = new_foo("nameless", "", Some(1));
    foo.metadata.namespace = Some("default".into());
    let stored = fixture.server().create(&foo).unwrap();
    fixture.foos.add(Arc::new(stored.clone())).unwrap();
    fixture.sync(&stored).await.unwrap();
    assert_eq!(fixture.actions(), (0, 0, 0));
}

#[tokio::test]
async fn missing_foo_is_dropped() {
    let Some(fixture) = Fixture::new().await else {
        return;
    };
    let mut gone = new_foo("gone", "gone-deployment", Some(1));
    gone.metadata.namespace = Some("default".into());
    fixture.sync(&gone).await.unwrap();
    assert_eq!(fixture.actions(), (0, 0, 0));
    assert!(fixture.event_reasons().is_empty());
}
