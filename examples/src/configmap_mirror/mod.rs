//! `configmap-mirror`: copies labelled ConfigMaps from a source namespace into target
//! namespaces, with the informer crate alone (a factory, one shared informer, two handlers)
//! and a workqueue.
//!
//! A ConfigMap in the source namespace labelled [`MIRROR_LABEL`]`=true` is copied, data and
//! all, into every target namespace; the copies carry [`SOURCE_LABEL`]`=<source namespace>`. The
//! source gets the [`FINALIZER`] so that deleting it first deletes the copies. One handler
//! follows the sources, the other follows the copies and puts back any that are edited or
//! deleted by hand.

mod handlers;
mod reconcile;

use std::sync::Arc;
use std::time::Duration;

use informer::{InformerFactory, ObjectKey};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use tokio_util::sync::CancellationToken;
use workqueue::{RateLimitingQueue, default_controller_rate_limiter};

pub use reconcile::{Mirror, desired_copy};

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
    config_maps.add_event_handler(handlers::sources(&config, &queue))?;
    config_maps.add_event_handler(handlers::copies(&config, &queue))?;

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

/// For the embedded server: creates the source and target namespaces and a labelled
/// `app-settings` ConfigMap in the source.
pub async fn seed_demo(client: &Client, config: &MirrorConfig) -> Result<(), kube::Error> {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, PostParams};

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
