//! Prints the number of Pods per node whenever it changes, from a reflector writing straight
//! into an indexer that indexes Pods by node name — no informer, no delta FIFO. Without a
//! configured cluster it starts an embedded apiserver-sim and schedules a few Pods there. Stop
//! with Ctrl-C.
//!
//! The parts: [`pod_cache`] (an `Indexer` with a `by-node` index), [`NotifyingStore`] (the
//! indexer as the reflector's `Store`, bumping a counter after every write), and
//! [`watch_node_counts`] (the reflector's run, reading the index after each write).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use examples::cluster::{Connection, shutdown_on_signal};
use indexer::{Indexer, Indexers, ObjectKey, Store};
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client};
use reflector::{ApiListerWatcher, Reflector, ReflectorOptions};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Name of the index of Pods by `spec.nodeName`.
pub const BY_NODE: &str = "by-node";

/// Pods per node name (scheduled Pods only).
pub type NodeCounts = BTreeMap<String, usize>;

/// The Pod cache with its by-node index.
pub fn pod_cache() -> Indexer<Pod> {
    Indexer::new(
        Indexers::new().with_field(BY_NODE, |pod: &Pod| pod.spec.as_ref()?.node_name.as_deref()),
    )
}

/// Pods per node, read from the index.
pub fn node_counts(cache: &Indexer<Pod>) -> Result<NodeCounts, indexer::Error> {
    let mut counts = NodeCounts::new();
    for node in cache.list_index_func_values(BY_NODE)? {
        let pods = cache.index_keys(BY_NODE, &node)?.len();
        if pods > 0 {
            counts.insert(node, pods);
        }
    }
    Ok(counts)
}

/// An [`Indexer`] that bumps a counter after every write, so readers can wait for changes
/// without an informer's event handlers.
pub struct NotifyingStore {
    cache: Indexer<Pod>,
    writes: watch::Sender<u64>,
}

impl NotifyingStore {
    fn notify<T>(&self, result: Result<T, indexer::Error>) -> Result<T, indexer::Error> {
        self.writes
            .send_modify(|writes| *writes = writes.wrapping_add(1));
        result
    }
}

impl Store<Pod> for NotifyingStore {
    fn add(&self, obj: Arc<Pod>) -> Result<(), indexer::Error> {
        self.notify(self.cache.add(obj))
    }
    fn update(&self, obj: Arc<Pod>) -> Result<(), indexer::Error> {
        self.notify(self.cache.update(obj))
    }
    fn delete(&self, obj: Arc<Pod>) -> Result<(), indexer::Error> {
        self.notify(Store::delete(&self.cache, obj))
    }
    fn replace(&self, objects: Vec<Arc<Pod>>, version: String) -> Result<(), indexer::Error> {
        self.notify(self.cache.replace(objects, version))
    }
    fn resync(&self) -> Result<(), indexer::Error> {
        Store::resync(&self.cache)
    }
    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<Pod>> {
        self.cache.get_by_key(key)
    }
    fn list(&self) -> Vec<Arc<Pod>> {
        self.cache.list()
    }
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.cache.list_keys()
    }
}

/// Lists and watches every Pod into an indexed cache until `shutdown`, calling `report` with
/// the per-node counts after the first list and whenever they change afterwards.
pub async fn watch_node_counts(
    client: Client,
    shutdown: CancellationToken,
    mut report: impl FnMut(&NodeCounts),
) -> Result<(), indexer::Error> {
    let cache = pod_cache();
    let (writes, mut changed) = watch::channel(0_u64);
    let store = Arc::new(NotifyingStore {
        cache: cache.clone(),
        writes,
    });
    let reflector = Reflector::new(
        Arc::new(ApiListerWatcher::new(Api::<Pod>::all(client))),
        store,
        ReflectorOptions::default(),
    );
    let run = reflector.run(shutdown.clone());
    tokio::pin!(run);
    let mut last: Option<NodeCounts> = None;
    loop {
        tokio::select! {
            () = &mut run => return Ok(()),
            result = changed.changed() => {
                if result.is_err() {
                    return Ok(());
                }
                let counts = node_counts(&cache)?;
                if last.as_ref() != Some(&counts) {
                    report(&counts);
                    last = Some(counts);
                }
            }
        }
    }
}

/// A Pod `name` in `default` scheduled on `node`.
pub fn pod_on(name: &str, node: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            ..ObjectMeta::default()
        },
        spec: Some(PodSpec {
            node_name: Some(node.to_owned()),
            containers: vec![Container {
                name: "app".to_owned(),
                image: Some("nginx:latest".to_owned()),
                ..Container::default()
            }],
            ..PodSpec::default()
        }),
        status: None,
    }
}

/// `node-a=2 node-b=1`, or `no pods scheduled`.
pub fn format_counts(counts: &NodeCounts) -> String {
    if counts.is_empty() {
        return "no pods scheduled".to_owned();
    }
    let parts: Vec<String> = counts
        .iter()
        .map(|(node, pods)| format!("{node}={pods}"))
        .collect();
    parts.join(" ")
}

/// For the embedded server: creates and deletes Pods on three nodes, one change a second, so
/// the counts have something to follow. Stops at `shutdown` or after the last step.
pub async fn simulate_scheduling(
    client: Client,
    shutdown: CancellationToken,
) -> Result<(), kube::Error> {
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let steps: [(&str, Option<&str>); 6] = [
        ("web-1", Some("node-a")),
        ("web-2", Some("node-b")),
        ("web-3", Some("node-a")),
        ("batch-1", Some("node-c")),
        ("web-1", None),
        ("batch-2", Some("node-c")),
    ];
    for (name, node) in steps {
        tokio::select! {
            () = shutdown.cancelled() => return Ok(()),
            () = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
        }
        match node {
            Some(node) => {
                pods.create(&PostParams::default(), &pod_on(name, node))
                    .await?;
            }
            None => {
                pods.delete(name, &DeleteParams::default().grace_period(0))
                    .await?;
            }
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    examples::logging::init();
    let connection = match Connection::establish("pod-index").await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::error!(%error, "cannot connect");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = shutdown_on_signal();
    if connection.embedded.is_some() {
        let (client, shutdown) = (connection.client.clone(), shutdown.clone());
        tokio::spawn(async move {
            if let Err(error) = simulate_scheduling(client, shutdown).await {
                tracing::warn!(%error, "simulated scheduling stopped");
            }
        });
    }
    let result = watch_node_counts(connection.client.clone(), shutdown, |counts| {
        println!("pods per node: {}", format_counts(counts));
    })
    .await;
    connection.close().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "pod index failed");
            ExitCode::FAILURE
        }
    }
}
