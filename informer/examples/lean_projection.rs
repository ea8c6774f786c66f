//! A lean projection type: the informer caches only the fields a controller reads, decoded
//! straight from the wire, instead of whole `k8s_openapi` Pods.
//!
//! `LeanPod` declares the Pod's kind, group and version (so `Api<LeanPod>` lists and watches
//! `/api/v1/pods`) and the fields this controller needs: name, namespace, resource version,
//! labels and owners; the node and the container images; the phase. `serde` skips every other
//! field while it decodes, so they are never allocated: no managedFields, annotations, env,
//! volumes, probes or conditions. On the benchmark's pods such an object takes a fraction of the
//! memory of a stripped `Pod` (`pipeline-bench` reports it as the lean row; see
//! `docs/benchmarks.md`).
//!
//! Runs against an in-process `apiserver-sim`: `cargo run -p kube-rt-informer --example lean_projection`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use informer::SharedIndexInformer;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Api;
use kube::core::ObjectMeta;
use serde::{Deserialize, Deserializer};
use tokio_util::sync::CancellationToken;

/// The part of a Pod this controller reads.
#[derive(Debug, Clone, Deserialize)]
struct LeanPod {
    #[serde(deserialize_with = "lean_metadata")]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: LeanSpec,
    #[serde(default)]
    status: LeanStatus,
}

/// `spec`: where the pod runs and what it runs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct LeanSpec {
    node_name: Option<String>,
    #[serde(default)]
    containers: Vec<LeanContainer>,
}

/// A container: its name and image only.
#[derive(Debug, Clone, Deserialize)]
struct LeanContainer {
    name: String,
    image: Option<String>,
}

/// `status`: the phase only.
#[derive(Debug, Clone, Default, Deserialize)]
struct LeanStatus {
    phase: Option<String>,
}

/// The metadata fields the caches and this controller need, read into an `ObjectMeta` (which
/// `Resource::meta` must return); every other field is skipped while decoding.
fn lean_metadata<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ObjectMeta, D::Error> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Wanted {
        name: Option<String>,
        namespace: Option<String>,
        resource_version: Option<String>,
        uid: Option<String>,
        labels: Option<BTreeMap<String, String>>,
        owner_references: Option<Vec<OwnerReference>>,
    }
    let wanted = Wanted::deserialize(deserializer)?;
    Ok(ObjectMeta {
        name: wanted.name,
        namespace: wanted.namespace,
        resource_version: wanted.resource_version,
        uid: wanted.uid,
        labels: wanted.labels,
        owner_references: wanted.owner_references,
        ..ObjectMeta::default()
    })
}

// `LeanPod` is served where Pods are: same kind, group, version, plural and scope.
informer::projection_of!(LeanPod, Pod);

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = apiserver_sim::ApiServer::start().await?;
    for (name, node) in [
        ("web-1", "node-a"),
        ("web-2", "node-b"),
        ("batch-1", "node-a"),
    ] {
        server.create(&Pod {
            metadata: ObjectMeta {
                namespace: Some("default".into()),
                name: Some(name.into()),
                annotations: Some(BTreeMap::from([("note".into(), "not cached".into())])),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                node_name: Some(node.into()),
                containers: vec![Container {
                    name: "main".into(),
                    image: Some("nginx:1.27".into()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
            ..Pod::default()
        })?;
    }

    // An informer of the lean type, over the Pods' own API path.
    let informer =
        Arc::new(SharedIndexInformer::for_api(Api::<LeanPod>::all(server.client()?)).build());
    let shutdown = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, shutdown) = (Arc::clone(&informer), shutdown.clone());
        async move { informer.run(shutdown).await }
    });
    tokio::time::timeout(Duration::from_secs(30), informer.synced()).await?;

    for pod in informer.indexer().list() {
        let images: Vec<&str> = pod
            .spec
            .containers
            .iter()
            .filter_map(|c| c.image.as_deref())
            .collect();
        println!(
            "{} on {}: {:?}, phase {}, annotations cached: {}",
            pod.metadata.name.as_deref().unwrap_or("?"),
            pod.spec.node_name.as_deref().unwrap_or("-"),
            images,
            pod.status.phase.as_deref().unwrap_or("unknown"),
            pod.metadata.annotations.is_some(),
        );
        assert!(
            pod.metadata.annotations.is_none(),
            "only the wanted fields are kept"
        );
        assert!(pod.spec.containers.iter().all(|c| !c.name.is_empty()));
    }
    assert_eq!(informer.indexer().list().len(), 3);
    shutdown.cancel();
    task.await?;
    server.shutdown().await;
    Ok(())
}
