//! Reconciling one source ConfigMap: finalizer, copies in every target, cleanup on deletion.

use std::collections::BTreeMap;
use std::sync::Arc;

use informer::{Lister, ObjectKey};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};

use super::{FINALIZER, MIRROR_LABEL, MirrorConfig, SOURCE_LABEL};

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
