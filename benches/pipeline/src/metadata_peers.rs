//! The metadata-only caches as [`Peer`]s: ours (the informer factory's metadata informers of
//! Pods) and kube-runtime's (its watcher over `Api<PartialObjectMeta<Pod>>`, the metadata
//! watcher, into a reflector store), each either one
//! cluster-wide cache or one cache per namespace of the fixture.

use std::sync::Arc;

use anyhow::Result;
use futures::StreamExt;
use informer::{InformerFactory, InformerScope, MetadataInformer};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::core::PartialObjectMeta;
use kube::runtime::reflector::{self, ObjectRef, Store};
use kube::runtime::{WatchStreamExt, watcher};
use tokio::task::JoinHandle;

use crate::fixtures::{Marker, namespace_name};
use crate::measure::{Peer, RunOptions};
use crate::ours::reflector_options;

/// The namespaces a run's caches cover: `None` for one cluster-wide cache, else one cache per
/// namespace of the fixture.
fn scopes(options: &RunOptions) -> Vec<Option<String>> {
    if options.per_namespace {
        (0..options.namespaces)
            .map(|k| Some(namespace_name(k)))
            .collect()
    } else {
        vec![None]
    }
}

/// Our metadata informers, from one factory.
#[derive(Debug)]
pub struct OursMetadata {
    factory: InformerFactory,
    informers: Vec<Arc<MetadataInformer<Pod>>>,
}

impl Peer for OursMetadata {
    const NAME: &'static str = "ours-metadata";

    fn start(client: kube::Client, options: &RunOptions) -> Result<Self> {
        let reflector = *options;
        let factory = InformerFactory::builder(client)
            .strip_managed_fields(options.strip_managed_fields)
            .reflector_options(move || reflector_options(&reflector))
            .build();
        let informers = scopes(options)
            .iter()
            .map(|scope| match scope {
                Some(namespace) => {
                    factory.metadata_informer_in::<Pod>(InformerScope::namespace(namespace))
                }
                None => factory.metadata_informer::<Pod>(),
            })
            .collect();
        factory.start();
        Ok(Self { factory, informers })
    }

    async fn synced(&self) {
        for informer in &self.informers {
            informer.synced().await;
        }
    }

    fn resource_version(&self, marker: &Marker) -> Result<Option<String>> {
        let key = informer::ObjectKey::namespaced(&marker.namespace, &marker.name)?;
        Ok(self
            .informers
            .iter()
            .find_map(|informer| informer.indexer().get_by_key(&key))
            .and_then(|pod| pod.metadata.resource_version.clone()))
    }

    fn len(&self) -> usize {
        self.informers
            .iter()
            .map(|informer| informer.cache_size())
            .sum()
    }

    async fn stop(self) {
        self.factory.shutdown().await;
    }
}

/// kube-runtime's metadata watchers and their stores.
#[derive(Debug)]
pub struct KubeRuntimeMetadata {
    stores: Vec<Store<PartialObjectMeta<Pod>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl Peer for KubeRuntimeMetadata {
    const NAME: &'static str = "kube-runtime-metadata";

    fn start(client: kube::Client, options: &RunOptions) -> Result<Self> {
        let mut config = watcher::Config::default().page_size(options.page_size.unwrap_or(500));
        if options.stream {
            config = config.streaming_lists();
        }
        let (mut stores, mut tasks) = (Vec::new(), Vec::new());
        for scope in scopes(options) {
            // kube's metadata watcher: an `Api<PartialObjectMeta<K>>` lists and watches
            // metadata only (what `metadata_watcher` did before it was deprecated).
            let api: Api<PartialObjectMeta<Pod>> = match &scope {
                Some(namespace) => Api::namespaced(client.clone(), namespace),
                None => Api::all(client.clone()),
            };
            let (store, writer) = reflector::store();
            let events = watcher(api, config.clone());
            let events = if options.strip_managed_fields {
                events
                    .modify(|pod| pod.metadata.managed_fields = None)
                    .boxed()
            } else {
                events.boxed()
            };
            tasks.push(tokio::spawn(
                reflector::reflector(writer, events).for_each(|_| async {}),
            ));
            stores.push(store);
        }
        Ok(Self { stores, tasks })
    }

    async fn synced(&self) {
        for store in &self.stores {
            // Only fails if the writer is dropped, which ends the run anyway.
            let _ = store.wait_until_ready().await;
        }
    }

    fn resource_version(&self, marker: &Marker) -> Result<Option<String>> {
        let key = ObjectRef::new(&marker.name).within(&marker.namespace);
        Ok(self
            .stores
            .iter()
            .find_map(|store| store.get(&key))
            .and_then(|pod| pod.metadata.resource_version.clone()))
    }

    fn len(&self) -> usize {
        self.stores.iter().map(Store::len).sum()
    }

    async fn stop(self) {
        for task in self.tasks {
            task.abort();
            let _ = task.await;
        }
    }
}
