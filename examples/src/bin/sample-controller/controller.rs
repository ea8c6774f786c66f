//! The controller (Go's `controller.go`): which events enqueue which Foo, the queue's rate
//! limiter, and the reconcile (`syncHandler`) — make the Foo's Deployment exist with the Foo's
//! replicas, report its available replicas in the Foo's status, and say so in events.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use controller_runtime::cache::{self, Cache, CacheLister};
use controller_runtime::controller::predicate::{Predicate, ResourceVersionChanged};
use controller_runtime::controller::{self, ControllerHandle};
use controller_runtime::indexer::Lister;
use controller_runtime::prelude::*;
use controller_runtime::rbac::{Rule, Verb};
use controller_runtime::util::{get_controller_of, is_controlled_by};
use examples::deployment::nginx_deployment_spec;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::PostParams;
use kube::{Api, Client, Resource, ResourceExt};
use workqueue::{ItemExponentialFailure, MaxOf, RateLimiter, TokenBucket};

use super::foo::{Foo, FooStatus};
use super::recorder::{EventType, Recorder};

/// Agent name: the events' source component and the field manager of every write.
pub const AGENT_NAME: &str = "sample-controller";
/// Reason of the event emitted when a Foo is synced.
pub const REASON_SUCCESS_SYNCED: &str = "Synced";
/// Reason of the event emitted when the Deployment exists but another object controls it.
pub const REASON_ERR_RESOURCE_EXISTS: &str = "ErrResourceExists";
/// Message of the event emitted when a Foo is synced.
pub const MESSAGE_RESOURCE_SYNCED: &str = "Foo synced successfully";
/// Reconciles running at once.
pub const WORKERS: usize = 2;
/// How often every cached Foo and Deployment is replayed (the Go informers' resync).
pub const RESYNC_PERIOD: Duration = Duration::from_secs(30);

/// Why the controller could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The rate limiter's settings were refused.
    #[error("rate limiter: {0}")]
    RateLimiter(#[from] workqueue::Error),
    /// The manager refused the controller.
    #[error("controller: {0}")]
    Controller(#[from] controller::Error),
    /// The generated roles could not be written as YAML.
    #[error("rbac: {0}")]
    Rbac(#[from] controller_runtime::rbac::Error),
    /// The placeholder client of the `rbac` subcommand could not be built.
    #[error("client: {0}")]
    Client(#[source] kube::Error),
    /// The manager refused a declared permission.
    #[error("manager: {0}")]
    Manager(#[from] controller_runtime::manager::Error),
}

/// Registers the sample-controller with `manager` (`NewController`; build the manager with
/// [`RESYNC_PERIOD`] as its resync period to match the Go controller), declaring its writes
/// ([`reconciler_permissions`]) for the manager's generated RBAC roles.
pub fn register(manager: &Manager) -> Result<ControllerHandle, SetupError> {
    let recorder = Recorder::new(manager.client().clone(), AGENT_NAME);
    let reconciler = SampleController::new(manager.client().clone(), recorder);
    let cache = manager.cache();
    let builder = Controller::new(manager)
        .for_(Watch::of::<Foo>().predicate(FooAddOrUpdate))
        .named(AGENT_NAME);
    // Deployment updates enqueue only when the resourceVersion changed (periodic resyncs
    // don't). A shard owns its Foos' Deployments, so they follow their Foo to its shard and
    // each shard caches only its own; otherwise Deployments map to their Foo as Go's
    // `handleObject` does.
    let deployments = Watch::of::<Deployment>().predicate(ResourceVersionChanged);
    let builder = if manager.shard().is_some() {
        builder.owns(deployments)
    } else {
        builder.watches(deployments, move |deployment: &Deployment| {
            controlling_foo(&cache, deployment)
        })
    };
    let handle = builder
        .max_concurrent_reconciles(WORKERS)
        // Events go out as core/v1 Events through the Go-style recorder, declared below.
        .event_recorder(false)
        .permissions(reconciler_permissions())
        .rate_limiter(rate_limiter()?)
        .build(reconciler)?;
    Ok(handle)
}

/// What the reconciler writes: Deployments (create, update), the Foo's status (update), and
/// core/v1 Events through the Go-style recorder (create, and patch to bump a repeat's count).
/// Its Deployments' owner reference sets `blockOwnerDeletion`, which clusters enforcing
/// owner-reference permissions (`OwnerReferencesPermissionEnforcement`) admit only with
/// `update` on the Foo's `finalizers` subresource (a controller built with `owns` gets that
/// rule generated; this one maps Deployments to Foos with `watches`).
pub fn reconciler_permissions() -> Vec<Rule> {
    vec![
        Rule::of::<Deployment>().verbs([Verb::Create, Verb::Update]),
        Rule::of::<Foo>().status().verbs([Verb::Update]),
        Rule::of::<Foo>()
            .subresource("finalizers")
            .verbs([Verb::Update]),
        Rule::of::<Event>().verbs([Verb::Create, Verb::Patch]),
    ]
}

/// Foo events that enqueue the Foo: adds and updates. A deleted Foo needs no work (its
/// Deployment is garbage-collected through the owner reference), so deletes are dropped.
#[derive(Clone, Copy, Debug, Default)]
pub struct FooAddOrUpdate;

impl Predicate<Foo> for FooAddOrUpdate {
    fn delete(&self, _foo: &Foo) -> bool {
        false
    }
}

/// The Foo to enqueue for a Deployment event (`handleObject`): the controller owner, if it is
/// a Foo that exists in the cache. Deleted Deployments arrive here unwrapped from tombstones.
pub fn controlling_foo(cache: &Cache, deployment: &Deployment) -> Option<ObjectKey> {
    let owner = get_controller_of(&deployment.metadata)?;
    if owner.kind != "Foo" {
        return None;
    }
    let namespace = deployment.namespace();
    let key = ObjectKey::new(namespace.as_deref(), &owner.name).ok()?;
    match cache.get::<Foo>(&key) {
        Ok(Some(_)) => Some(key),
        Ok(None) => {
            tracing::debug!(
                deployment = %deployment.name_any(),
                foo = %key,
                "ignore orphaned object"
            );
            None
        }
        Err(error) => {
            tracing::error!(%error, foo = %key, "cannot read the Foo cache");
            None
        }
    }
}

/// The sample-controller's queue limiter: the slower of a per-item exponential backoff
/// (5 ms doubling to 1000 s) and an overall token bucket of 50 qps with a burst of 300.
pub fn rate_limiter() -> Result<impl RateLimiter<ObjectKey>, workqueue::Error> {
    let exponential =
        ItemExponentialFailure::new(Duration::from_millis(5), Duration::from_secs(1000));
    let bucket = TokenBucket::new(50.0, 300)?;
    Ok(MaxOf::new(vec![Box::new(exponential), Box::new(bucket)]))
}

/// The Deployment for `foo` (`newDeployment`): named `spec.deploymentName` in the Foo's
/// namespace, controlled by the Foo (`controller` and `blockOwnerDeletion`), labels
/// `app=nginx` and `controller=<foo>` on the selector and the pods, `spec.replicas` replicas
/// (absent: the server's default) of one `nginx:latest` container.
pub fn new_deployment(foo: &Foo) -> Deployment {
    let labels = BTreeMap::from([
        ("app".to_owned(), "nginx".to_owned()),
        ("controller".to_owned(), foo.name_any()),
    ]);
    let owner = OwnerReference {
        api_version: Foo::api_version(&()).into_owned(),
        kind: Foo::kind(&()).into_owned(),
        name: foo.name_any(),
        uid: foo.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.namespace(),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: nginx_deployment_spec(labels, foo.spec.replicas),
        status: None,
    }
}

/// Where `sync_handler` looks up a Foo's Deployment (Go's `DeploymentLister`): the manager's
/// cache, or an informer-level lister over an indexer (the ported Go tests fill one by hand).
pub trait DeploymentLister {
    /// The cached Deployment `name` in `namespace`, if there is one.
    fn deployment(&self, namespace: &str, name: &str)
    -> Result<Option<Arc<Deployment>>, SyncError>;
}

impl DeploymentLister for CacheLister<Deployment> {
    fn deployment(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Deployment>>, SyncError> {
        Ok(self.namespace(namespace).get(name)?)
    }
}

impl DeploymentLister for Lister<Deployment> {
    fn deployment(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Deployment>>, SyncError> {
        Ok(self.namespace(namespace).get(name))
    }
}

/// Why a sync failed; every variant is retried with the key's backoff.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A Deployment with the Foo's `deploymentName` exists and another object (or nobody)
    /// controls it.
    #[error("{}", resource_exists_message(.0))]
    ResourceExists(String),
    /// The controller's cache does not hold Deployments (the controller must watch them).
    #[error("deployment cache: {0}")]
    Cache(#[from] cache::Error),
    /// Creating, updating or reading an object failed.
    #[error("{action} {name}: {source}")]
    Api {
        /// What was being done (`creating deployment`, ...).
        action: &'static str,
        /// The object's name.
        name: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
}

/// `Resource "<name>" already exists and is not managed by Foo` (Go's `%q` quoting).
pub fn resource_exists_message(name: &str) -> String {
    format!("Resource {name:?} already exists and is not managed by Foo")
}

/// The sample-controller's reconciler: reads the Foo and the Deployments from the controller's
/// caches, writes through the client, reports with the recorder.
#[derive(Clone)]
pub struct SampleController {
    client: Client,
    recorder: Recorder,
}

impl std::fmt::Debug for SampleController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SampleController")
            .field("recorder", &self.recorder)
            .finish_non_exhaustive()
    }
}

impl SampleController {
    /// A controller that writes through `client` and reports with `recorder`.
    pub fn new(client: Client, recorder: Recorder) -> Self {
        Self { client, recorder }
    }

    fn write_params() -> PostParams {
        PostParams {
            field_manager: Some(AGENT_NAME.to_owned()),
            ..PostParams::default()
        }
    }

    /// Brings the Foo named `key` (`foo`: its cached state, `None` once it is gone) and its
    /// Deployment (looked up in `deployments`) in line. `Ok` means done (including the cases that
    /// retrying cannot fix: a vanished Foo, a missing `deploymentName`).
    pub async fn sync_handler(
        &self,
        key: &ObjectKey,
        foo: Option<Arc<Foo>>,
        deployments: &impl DeploymentLister,
    ) -> Result<(), SyncError> {
        let Some(foo) = foo else {
            tracing::info!(foo = %key, "Foo referenced by item in work queue no longer exists");
            return Ok(());
        };
        let namespace = foo.namespace().unwrap_or_default();
        let deployment_name = foo.spec.deployment_name.as_str();
        if deployment_name.is_empty() {
            tracing::error!(foo = %key, "Deployment name missing from object reference");
            return Ok(());
        }

        let cached = deployments
            .deployment(&namespace, deployment_name)?
            .map(|d| d.as_ref().clone());
        let deployments: Api<Deployment> = Api::namespaced(self.client.clone(), &namespace);
        let deployment = match cached {
            Some(deployment) => deployment,
            None => deployments
                .create(&Self::write_params(), &new_deployment(&foo))
                .await
                .map_err(|source| api_error("creating deployment", deployment_name, source))?,
        };

        if !is_controlled_by(&deployment.metadata, foo.as_ref()) {
            let message = resource_exists_message(deployment_name);
            self.recorder
                .record(
                    foo.as_ref(),
                    EventType::Warning,
                    REASON_ERR_RESOURCE_EXISTS,
                    &message,
                )
                .await;
            return Err(SyncError::ResourceExists(deployment_name.to_owned()));
        }

        let current = deployment.spec.replicas;
        let deployment = match foo.spec.replicas {
            Some(wanted) if Some(wanted) != current => {
                tracing::info!(foo = %key, wanted, ?current, "updating deployment replicas");
                deployments
                    .replace(
                        deployment_name,
                        &Self::write_params(),
                        &new_deployment(&foo),
                    )
                    .await
                    .map_err(|source| api_error("updating deployment", deployment_name, source))?
            }
            _ => deployment,
        };

        self.update_foo_status(&foo, &deployment).await?;
        self.recorder
            .record(
                foo.as_ref(),
                EventType::Normal,
                REASON_SUCCESS_SYNCED,
                MESSAGE_RESOURCE_SYNCED,
            )
            .await;
        Ok(())
    }

    /// Copies the Deployment's available replicas into the Foo's status.
    async fn update_foo_status(&self, foo: &Foo, deployment: &Deployment) -> Result<(), SyncError> {
        let mut copy = foo.clone();
        copy.status = Some(FooStatus {
            available_replicas: deployment
                .status
                .as_ref()
                .and_then(|status| status.available_replicas)
                .unwrap_or(0),
        });
        let name = foo.name_any();
        let foos: Api<Foo> =
            Api::namespaced(self.client.clone(), &foo.namespace().unwrap_or_default());
        foos.replace_status(&name, &Self::write_params(), &copy)
            .await
            .map_err(|source| api_error("updating status of foo", &name, source))?;
        Ok(())
    }
}

fn api_error(action: &'static str, name: &str, source: kube::Error) -> SyncError {
    SyncError::Api {
        action,
        name: name.to_owned(),
        source,
    }
}

impl Reconciler<Foo> for SampleController {
    type Error = SyncError;

    async fn reconcile(&self, request: Request, ctx: Context<Foo>) -> Result<Action, SyncError> {
        // The Deployments' lister (Go's `deploymentsLister`): the manager's cache, typed or
        // compact.
        let deployments = ctx.cache().lister::<Deployment>()?;
        self.sync_handler(&request.key, ctx.get(), &deployments)
            .await?;
        tracing::info!(resource = %request.key, "Successfully synced");
        Ok(Action::done())
    }
}
