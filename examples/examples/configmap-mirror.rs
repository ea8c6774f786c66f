//! Mirrors ConfigMaps labelled `mirror.kube-rt.dev/enabled=true` from namespace `shared` into
//! `team-a` and `team-b`, with the informer crate alone — a factory, one shared informer, two
//! event handlers — and a rate-limited workqueue drained by workers. Without a configured
//! cluster it starts an embedded apiserver-sim, creates the namespaces and one labelled
//! ConfigMap. Stop with Ctrl-C.
//!
//! A ConfigMap in the source namespace labelled [`MIRROR_LABEL`]`=true` is copied, data and
//! all, into every target namespace; the copies carry [`SOURCE_LABEL`]`=<source namespace>`.
//! The source gets the [`FINALIZER`] so that deleting it first deletes the copies. One handler
//! follows the sources ([`sources`]), the other follows the copies ([`copies`]) and puts back
//! any that are edited or deleted by hand; both enqueue the source's key, and [`Mirror`]
//! reconciles it.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use examples::cluster::{Connection, shutdown_on_signal};
use informer::{DeletedObject, HandlerFuncs, InformerFactory, Lister, ObjectKey, handler};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use tokio_util::sync::CancellationToken;
use workqueue::{RateLimitingQueue, default_controller_rate_limiter};

/// Label that asks for a ConfigMap to be mirrored.
pub const MIRROR_LABEL: &str = "mirror.kube-rt.dev/enabled";
/// Label on every copy: the source namespace.
pub const SOURCE_LABEL: &str = "mirror.kube-rt.dev/source";
/// Finalizer on mirrored sources: their copies are deleted before they go.
pub const FINALIZER: &str = "mirror.kube-rt.dev/cleanup";
/// How long the informer may take to sync.
pub const SYNC_TIMEOUT: Duration = Duration::from_secs(30);

/// Where to mirror from and to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MirrorConfig {
    /// The namespace whose labelled ConfigMaps are mirrored.
    pub source: String,
    /// The namespaces that receive copies.
    pub targets: Vec<String>,
}

/// Why the mirror stopped.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// The informer failed to start or sync, or refused a handler.
    #[error("informer: {0}")]
    Informer(#[from] informer::Error),
}

/// Mirrors ConfigMaps as `config` says until `shutdown`, with `workers` reconciling at once.
pub async fn run(
    client: Client,
    config: MirrorConfig,
    workers: usize,
    shutdown: CancellationToken,
) -> Result<(), MirrorError> {
    let factory = InformerFactory::new(client.clone());
    let config_maps = factory.informer::<ConfigMap>();
    let queue: RateLimitingQueue<ObjectKey> =
        RateLimitingQueue::new(default_controller_rate_limiter());
    let config = Arc::new(config);
    config_maps.add_event_handler(sources(&config, &queue))?;
    config_maps.add_event_handler(copies(&config, &queue))?;

    factory.start();
    let synced = tokio::select! {
        synced = factory.wait_for_cache_sync(SYNC_TIMEOUT) => synced,
        () = shutdown.cancelled() => Ok(()),
    };
    if let Err(error) = synced {
        factory.shutdown().await;
        return Err(error.into());
    }
    tracing::info!(source = %config.source, targets = ?config.targets, "mirroring ConfigMaps");

    let mirror = Mirror::new(client, Arc::clone(&config), config_maps.lister());
    let mut pool = tokio::task::JoinSet::new();
    for _ in 0..workers.max(1) {
        let (queue, mirror) = (queue.clone(), mirror.clone());
        pool.spawn(async move {
            while let Some(key) = queue.get().await {
                match mirror.reconcile(&key).await {
                    Ok(()) => queue.forget(&key),
                    Err(error) => {
                        tracing::warn!(source = %key, %error, "mirroring failed; retrying");
                        queue.add_rate_limited(key.clone());
                    }
                }
                queue.done(&key);
            }
        });
    }
    shutdown.cancelled().await;
    queue.shut_down();
    while pool.join_next().await.is_some() {}
    factory.shutdown().await;
    Ok(())
}

// The two event handlers on the shared ConfigMap informer: one for sources, one for copies.
// Both enqueue the key of the source ConfigMap.

/// The source key of `cm` if it is a source: in the source namespace, labelled for mirroring
/// (or still carrying our finalizer, so an unlabelled source gets cleaned up).
fn as_source(config: &MirrorConfig, cm: &ConfigMap) -> Option<ObjectKey> {
    let in_source = cm.namespace().as_deref() == Some(config.source.as_str());
    let wanted = cm.labels().get(MIRROR_LABEL).is_some_and(|v| v == "true");
    let finalized = cm.finalizers().iter().any(|f| f == FINALIZER);
    (in_source && (wanted || finalized))
        .then(|| ObjectKey::new(Some(&config.source), &cm.name_any()).ok())
        .flatten()
}

/// The source key of `cm` if it is one of our copies.
fn as_copy(config: &MirrorConfig, cm: &ConfigMap) -> Option<ObjectKey> {
    let in_target = cm
        .namespace()
        .is_some_and(|ns| config.targets.contains(&ns));
    let ours = cm.labels().get(SOURCE_LABEL) == Some(&config.source);
    (in_target && ours)
        .then(|| ObjectKey::new(Some(&config.source), &cm.name_any()).ok())
        .flatten()
}

/// A handler that enqueues whatever `map` returns for added, updated and deleted ConfigMaps.
fn enqueuing(
    name: &str,
    config: &Arc<MirrorConfig>,
    queue: &RateLimitingQueue<ObjectKey>,
    map: fn(&MirrorConfig, &ConfigMap) -> Option<ObjectKey>,
) -> HandlerFuncs<ConfigMap> {
    let (c_add, c_update, c_delete) = (config.clone(), config.clone(), config.clone());
    let (q_add, q_update, q_delete) = (queue.clone(), queue.clone(), queue.clone());
    handler()
        .named(name)
        .on_add(move |cm: Arc<ConfigMap>, _initial| {
            if let Some(key) = map(&c_add, &cm) {
                q_add.add(key);
            }
        })
        .on_update(move |_old: Arc<ConfigMap>, new: Arc<ConfigMap>| {
            if let Some(key) = map(&c_update, &new) {
                q_update.add(key);
            }
        })
        .on_delete(move |deleted: DeletedObject<ConfigMap>| {
            if let Some(key) = deleted.object().and_then(|cm| map(&c_delete, cm)) {
                q_delete.add(key);
            }
        })
}

/// Sources: any change to a labelled ConfigMap in the source namespace.
fn sources(
    config: &Arc<MirrorConfig>,
    queue: &RateLimitingQueue<ObjectKey>,
) -> HandlerFuncs<ConfigMap> {
    enqueuing("mirror-sources", config, queue, as_source)
}

/// Copies: a copy changed or deleted by someone else is put back by re-syncing its source.
fn copies(
    config: &Arc<MirrorConfig>,
    queue: &RateLimitingQueue<ObjectKey>,
) -> HandlerFuncs<ConfigMap> {
    enqueuing("mirror-copies", config, queue, as_copy)
}

// Reconciling one source ConfigMap: finalizer, copies in every target, cleanup on deletion.

/// Applies one source's desired state. Cheap to clone.
#[derive(Clone)]
pub struct Mirror {
    client: Client,
    config: Arc<MirrorConfig>,
    cache: Lister<ConfigMap>,
}

impl std::fmt::Debug for Mirror {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mirror")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// The copy of `source` for `namespace`: same name, data and binary data, labelled with the
/// source namespace.
pub fn desired_copy(source: &ConfigMap, source_namespace: &str, namespace: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(source.name_any()),
            namespace: Some(namespace.to_owned()),
            labels: Some(BTreeMap::from([(
                SOURCE_LABEL.to_owned(),
                source_namespace.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: source.data.clone(),
        binary_data: source.binary_data.clone(),
        immutable: None,
    }
}

impl Mirror {
    /// A mirror writing with `client` and reading from `cache`.
    pub fn new(client: Client, config: Arc<MirrorConfig>, cache: Lister<ConfigMap>) -> Self {
        Self {
            client,
            config,
            cache,
        }
    }

    /// Brings the copies of the source `key` in line; cleans up when it is being deleted or no
    /// longer labelled.
    pub async fn reconcile(&self, key: &ObjectKey) -> Result<(), kube::Error> {
        let Some(source) = self.cache.indexer().get_by_key(key) else {
            return Ok(());
        };
        let wanted = source
            .labels()
            .get(MIRROR_LABEL)
            .is_some_and(|v| v == "true");
        if source.metadata.deletion_timestamp.is_some() || !wanted {
            return self.clean_up(&source).await;
        }
        self.set_finalizer(&source, true).await?;
        for target in &self.config.targets {
            self.sync_copy(&source, target).await?;
        }
        Ok(())
    }

    /// Creates or corrects the copy in `target`.
    async fn sync_copy(&self, source: &ConfigMap, target: &str) -> Result<(), kube::Error> {
        let desired = desired_copy(source, &self.config.source, target);
        let name = source.name_any();
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), target);
        match self.cache.namespace(target).get(&name) {
            None => {
                match api.create(&PostParams::default(), &desired).await {
                    Ok(_) => tracing::info!(name, target, "copy created"),
                    // The cache has not seen it yet; the next event brings us back.
                    Err(kube::Error::Api(status)) if status.code == 409 => {}
                    Err(error) => return Err(error),
                }
            }
            Some(current) if !is_copy(&current, &self.config.source) => {
                tracing::warn!(
                    name,
                    target,
                    "a ConfigMap that is not a copy is in the way; leaving it"
                );
            }
            Some(current) if differs(&current, &desired) => {
                let mut replacement = desired;
                replacement.metadata.resource_version = current.resource_version();
                api.replace(&name, &PostParams::default(), &replacement)
                    .await?;
                tracing::info!(name, target, "copy updated");
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Deletes every copy, then releases the source.
    async fn clean_up(&self, source: &ConfigMap) -> Result<(), kube::Error> {
        let name = source.name_any();
        for target in &self.config.targets {
            let ours = self
                .cache
                .namespace(target)
                .get(&name)
                .is_some_and(|copy| is_copy(&copy, &self.config.source));
            if !ours {
                continue;
            }
            let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), target);
            match api.delete(&name, &DeleteParams::default()).await {
                Ok(_) => tracing::info!(name, target, "copy deleted"),
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error),
            }
        }
        self.set_finalizer(source, false).await
    }

    /// Adds or removes the finalizer (optimistic concurrency on the cached resourceVersion).
    async fn set_finalizer(&self, source: &ConfigMap, present: bool) -> Result<(), kube::Error> {
        let mut finalizers = source.finalizers().to_vec();
        let has = finalizers.iter().any(|f| f == FINALIZER);
        if has == present {
            return Ok(());
        }
        if present {
            finalizers.push(FINALIZER.to_owned());
        } else {
            finalizers.retain(|f| f != FINALIZER);
        }
        let patch = serde_json::json!({
            "metadata": {
                "finalizers": finalizers,
                "resourceVersion": source.resource_version(),
            }
        });
        let api: Api<ConfigMap> = Api::namespaced(self.client.clone(), &self.config.source);
        api.patch(
            &source.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
        Ok(())
    }
}

/// Whether `cm` is a copy made from the `source` namespace.
fn is_copy(cm: &ConfigMap, source: &str) -> bool {
    cm.labels().get(SOURCE_LABEL).is_some_and(|s| s == source)
}

/// Whether the copy's content differs from the desired one.
fn differs(current: &ConfigMap, desired: &ConfigMap) -> bool {
    current.data != desired.data || current.binary_data != desired.binary_data
}

/// For the embedded server: creates the source and target namespaces and a labelled
/// `app-settings` ConfigMap in the source.
pub async fn seed_demo(client: &Client, config: &MirrorConfig) -> Result<(), kube::Error> {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    for name in std::iter::once(&config.source).chain(&config.targets) {
        let mut namespace = Namespace::default();
        namespace.metadata.name = Some(name.clone());
        match namespaces.create(&PostParams::default(), &namespace).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 409 => {}
            Err(error) => return Err(error),
        }
    }
    let mut settings = ConfigMap::default();
    settings.metadata.name = Some("app-settings".to_owned());
    settings.metadata.labels = Some([(MIRROR_LABEL.to_owned(), "true".to_owned())].into());
    settings.data = Some([("log-level".to_owned(), "info".to_owned())].into());
    let sources: Api<ConfigMap> = Api::namespaced(client.clone(), &config.source);
    sources.create(&PostParams::default(), &settings).await?;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    examples::logging::init();
    let connection = match Connection::establish("configmap-mirror").await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::error!(%error, "cannot connect");
            return ExitCode::FAILURE;
        }
    };
    let config = MirrorConfig {
        source: "shared".to_owned(),
        targets: vec!["team-a".to_owned(), "team-b".to_owned()],
    };
    if connection.embedded.is_some()
        && let Err(error) = seed_demo(&connection.client, &config).await
    {
        tracing::error!(%error, "cannot seed the embedded server");
        connection.close().await;
        return ExitCode::FAILURE;
    }
    let result = run(connection.client.clone(), config, 2, shutdown_on_signal()).await;
    connection.close().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "configmap-mirror failed");
            ExitCode::FAILURE
        }
    }
}
