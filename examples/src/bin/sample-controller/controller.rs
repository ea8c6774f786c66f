//! The sample-controller's reconcile (`syncHandler`): make the Foo's Deployment exist with the
//! Foo's replicas, report its available replicas in the Foo's status, and say so in events.

use std::sync::Arc;

use controller_runtime::{
    Action, Context, Lister, ObjectKey, Reconciler, Request, is_controlled_by,
};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::PostParams;
use kube::{Api, Client, ResourceExt};

use super::deployment::new_deployment;
use super::{
    AGENT_NAME, MESSAGE_RESOURCE_SYNCED, REASON_ERR_RESOURCE_EXISTS, REASON_SUCCESS_SYNCED,
};
use crate::foo::{Foo, FooStatus};
use crate::recorder::{EventType, Recorder};

/// Why a sync failed; every variant is retried with the key's backoff.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A Deployment with the Foo's `deploymentName` exists and another object (or nobody)
    /// controls it.
    #[error("{}", resource_exists_message(.0))]
    ResourceExists(String),
    /// The controller's cache does not hold Deployments (the controller must watch them).
    #[error("deployment cache: {0}")]
    Cache(#[from] controller_runtime::Error),
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
        deployments: &Lister<Deployment>,
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
            .namespace(&namespace)
            .get(deployment_name)
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
        // The informer-level lister of the Foo's namespace (the one cache unless the manager
        // caches several namespaces).
        let deployments = ctx
            .cache()
            .lister::<Deployment>()?
            .informer_lister(request.key.namespace())?;
        self.sync_handler(&request.key, ctx.get(), &deployments)
            .await?;
        tracing::info!(resource = %request.key, "Successfully synced");
        Ok(Action::Done)
    }
}
