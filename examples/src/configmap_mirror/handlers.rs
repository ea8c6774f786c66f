//! The two event handlers on the shared ConfigMap informer: one for sources, one for copies.
//! Both enqueue the key of the source ConfigMap.

use std::sync::Arc;

use informer::{DeletedObject, HandlerFuncs, ObjectKey, handler};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use workqueue::RateLimitingQueue;

use super::{MIRROR_LABEL, MirrorConfig, SOURCE_LABEL};

/// The source key of `cm` if it is a source: in the source namespace, labelled for mirroring
/// (or still carrying our finalizer, so an unlabelled source gets cleaned up).
fn as_source(config: &MirrorConfig, cm: &ConfigMap) -> Option<ObjectKey> {
    let in_source = cm.namespace().as_deref() == Some(config.source.as_str());
    let wanted = cm.labels().get(MIRROR_LABEL).is_some_and(|v| v == "true");
    let finalized = cm.finalizers().iter().any(|f| f == super::FINALIZER);
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
pub(super) fn sources(
    config: &Arc<MirrorConfig>,
    queue: &RateLimitingQueue<ObjectKey>,
) -> HandlerFuncs<ConfigMap> {
    enqueuing("mirror-sources", config, queue, as_source)
}

/// Copies: a copy changed or deleted by someone else is put back by re-syncing its source.
pub(super) fn copies(
    config: &Arc<MirrorConfig>,
    queue: &RateLimitingQueue<ObjectKey>,
) -> HandlerFuncs<ConfigMap> {
    enqueuing("mirror-copies", config, queue, as_copy)
}
