//! Rolls a Deployment out again whenever a ConfigMap its pods reference changes — a
//! controller-runtime operator that finds the Deployments through a field index. Without a
//! configured cluster it starts an embedded apiserver-sim with ConfigMap `app-settings` and
//! Deployment `web`; edit the ConfigMap (`kubectl edit configmap app-settings`) and watch the
//! Deployment's pod template annotation `config.kube-rt.dev/versions` follow. Stop with Ctrl-C.
//!
//! The manager indexes Deployments by the ConfigMaps their pod template references
//! ([`CONFIG_MAP_INDEX`]: volumes, `envFrom` and `env[].valueFrom`). A change to a ConfigMap is
//! mapped through that index to every Deployment in its namespace that references it — no
//! scan of all Deployments — and each is reconciled: the reconciler stamps the pod template
//! with [`CONFIG_VERSIONS_ANNOTATION`], the resourceVersions of the ConfigMaps it references,
//! so that a changed ConfigMap changes the template and the Deployment rolls out new pods.

use std::process::ExitCode;

use controller_runtime::cache::{self, Cache};
use controller_runtime::controller::{self, ControllerHandle};
use controller_runtime::manager;
use controller_runtime::prelude::*;
use examples::cluster::{Connection, shutdown_on_signal};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, PodSpec};
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use tokio_util::sync::CancellationToken;

/// The field index of Deployments: the names of the ConfigMaps their pod template references.
pub const CONFIG_MAP_INDEX: &str = "spec.template.configMaps";
/// The pod-template annotation holding `name=resourceVersion` of each referenced ConfigMap.
pub const CONFIG_VERSIONS_ANNOTATION: &str = "config.kube-rt.dev/versions";
/// The controller's name.
pub const CONTROLLER_NAME: &str = "config-reloader";

/// Why the reloader stopped or a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum ReloaderError {
    /// The cache refused a read or the field index.
    #[error("cache: {0}")]
    Cache(#[from] cache::Error),
    /// The controller's settings were refused.
    #[error("controller: {0}")]
    Controller(#[from] controller::Error),
    /// The manager failed to start or stopped with an error.
    #[error("manager: {0}")]
    Manager(#[from] manager::Error),
    /// A request to the API server failed.
    #[error("API request failed: {0}")]
    Kube(#[from] kube::Error),
}

/// The names of the ConfigMaps `spec` references, sorted, without duplicates.
pub fn referenced_config_maps(spec: &PodSpec) -> Vec<String> {
    let mut names = Vec::new();
    for volume in spec.volumes.iter().flatten() {
        names.extend(volume.config_map.as_ref().map(|cm| cm.name.clone()));
    }
    let containers = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten());
    for container in containers {
        for source in container.env_from.iter().flatten() {
            names.extend(source.config_map_ref.as_ref().map(|cm| cm.name.clone()));
        }
        for var in container.env.iter().flatten() {
            let reference = var
                .value_from
                .as_ref()
                .and_then(|from| from.config_map_key_ref.as_ref());
            names.extend(reference.map(|cm| cm.name.clone()));
        }
    }
    names.sort();
    names.dedup();
    names
}

/// The index function of [`CONFIG_MAP_INDEX`].
pub fn deployment_config_maps(deployment: &Deployment) -> Vec<String> {
    deployment
        .spec
        .template
        .spec
        .as_ref()
        .map(referenced_config_maps)
        .unwrap_or_default()
}

/// Stamps each Deployment's pod template with the versions of the ConfigMaps it references.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConfigReloader;

impl Reconciler<Deployment> for ConfigReloader {
    type Error = ReloaderError;

    async fn reconcile(
        &self,
        request: Request,
        ctx: Context<Deployment>,
    ) -> Result<Action, ReloaderError> {
        let Some(deployment) = ctx.get() else {
            return Ok(Action::done());
        };
        let referenced = deployment_config_maps(&deployment);
        if referenced.is_empty() {
            return Ok(Action::done());
        }
        let namespace = request.key.namespace().unwrap_or_default();
        let config_maps = ctx.cache().lister::<ConfigMap>()?.namespace(namespace);
        let mut versions = Vec::with_capacity(referenced.len());
        for name in &referenced {
            // A missing ConfigMap is recorded as such: its creation changes the stamp too.
            let version = config_maps
                .get(name)?
                .and_then(|cm| cm.metadata.resource_version.clone())
                .unwrap_or_else(|| "missing".to_owned());
            versions.push(format!("{name}={version}"));
        }
        let wanted = versions.join(",");
        if stamped_versions(&deployment).as_ref() == Some(&wanted) {
            return Ok(Action::done());
        }
        tracing::info!(deployment = %request.key, versions = %wanted, "referenced ConfigMaps changed; rolling out");
        let patch = serde_json::json!({
            "spec": {"template": {"metadata": {"annotations": {CONFIG_VERSIONS_ANNOTATION: wanted}}}}
        });
        ctx.patch(&PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        Ok(Action::done())
    }
}

/// Registers the index and the controller with `manager` (before it starts).
pub fn register(manager: &Manager) -> Result<ControllerHandle, ReloaderError> {
    let cache = manager.cache();
    cache.index_field::<Deployment>(CONFIG_MAP_INDEX, deployment_config_maps)?;
    let handle = Controller::new(manager)
        .for_(Watch::of::<Deployment>())
        .named(CONTROLLER_NAME)
        .watches(Watch::of::<ConfigMap>(), move |config_map: &ConfigMap| {
            deployments_referencing(&cache, config_map)
        })
        .build(ConfigReloader)?;
    Ok(handle)
}

/// Every cached Deployment in `config_map`'s namespace whose pod template references it.
fn deployments_referencing(cache: &Cache, config_map: &ConfigMap) -> Vec<ObjectKey> {
    let (Some(namespace), Some(name)) = (
        config_map.metadata.namespace.as_deref(),
        config_map.metadata.name.as_deref(),
    ) else {
        return Vec::new();
    };
    let found = cache.lister::<Deployment>().and_then(|deployments| {
        deployments
            .namespace(namespace)
            .keys_by_field(CONFIG_MAP_INDEX, name)
    });
    match found {
        Ok(keys) => keys,
        Err(error) => {
            tracing::error!(%error, config_map = name, "cannot look up the Deployments referencing a ConfigMap");
            Vec::new()
        }
    }
}

/// Runs the reloader against `client` until `shutdown`.
pub async fn run(client: Client, shutdown: CancellationToken) -> Result<(), ReloaderError> {
    let manager = Manager::builder(client)
        .handle_signals(false)
        .shutdown_token(shutdown)
        .build();
    register(&manager)?;
    manager.start().await?;
    Ok(())
}

/// Creates the demo objects in `default`: ConfigMap `app-settings` and Deployment `web`, whose
/// pods read it through `envFrom`.
pub async fn seed_demo(client: &Client) -> Result<(), ReloaderError> {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let config_map: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "app-settings"},
        "data": {"LOG_LEVEL": "info"},
    }))
    .map_err(kube::Error::SerdeError)?;
    config_maps
        .create(&PostParams::default(), &config_map)
        .await?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    deployments
        .create(
            &PostParams::default(),
            &web_deployment("web", "app-settings").map_err(kube::Error::SerdeError)?,
        )
        .await?;
    Ok(())
}

/// A Deployment named `name` whose container reads ConfigMap `config_map` through `envFrom`.
pub fn web_deployment(name: &str, config_map: &str) -> Result<Deployment, serde_json::Error> {
    let labels = serde_json::json!({"app": name});
    let deployment = serde_json::json!({
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{
                    "name": "web",
                    "image": "nginx:latest",
                    "envFrom": [{"configMapRef": {"name": config_map}}],
                }]},
            },
        },
    });
    serde_json::from_value(deployment)
}

/// The [`CONFIG_VERSIONS_ANNOTATION`] of `deployment`'s pod template, if stamped.
pub fn stamped_versions(deployment: &Deployment) -> Option<String> {
    deployment
        .spec
        .template
        .metadata
        .as_ref()?
        .annotations
        .as_ref()?
        .get(CONFIG_VERSIONS_ANNOTATION)
        .cloned()
}

#[tokio::main]
async fn main() -> ExitCode {
    examples::logging::init();
    let connection = match Connection::establish("config-reloader").await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::error!(%error, "cannot connect");
            return ExitCode::FAILURE;
        }
    };
    if connection.embedded.is_some()
        && let Err(error) = seed_demo(&connection.client).await
    {
        tracing::error!(%error, "cannot seed the embedded server");
        connection.close().await;
        return ExitCode::FAILURE;
    }
    let result = run(connection.client.clone(), shutdown_on_signal()).await;
    connection.close().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "config-reloader failed");
            ExitCode::FAILURE
        }
    }
}
