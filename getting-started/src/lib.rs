//! A Memcached operator: each `Memcached` (group `cache.example.com`) gets a Deployment of
//! `spec.size` memcached Pods, owned by it (so the garbage collector removes it with the
//! Memcached), and `status.nodes` lists the names of its Pods. Reconciles report an event.

use std::sync::Arc;

use controller_runtime::controller::{self, ControllerHandle};
use controller_runtime::prelude::*;
use controller_runtime::util::create_or_update;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, ContainerPort, Pod, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kube::api::{Api, Patch, PatchParams};
use kube::core::Selector;
use kube::{CustomResource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The label that ties a Pod to its Memcached.
pub const INSTANCE_LABEL: &str = "memcached.cache.example.com/instance";

/// The desired state of a Memcached.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "cache.example.com",
    version = "v1alpha1",
    kind = "Memcached",
    namespaced
)]
#[kube(status = "MemcachedStatus")]
pub struct MemcachedSpec {
    /// How many memcached Pods to run.
    pub size: i32,
}

/// The observed state of a Memcached.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq)]
pub struct MemcachedStatus {
    /// The names of its Pods, sorted.
    pub nodes: Vec<String>,
}

/// Registers the operator's controller: it reconciles Memcacheds, the Deployments they own and
/// the Pods carrying their label.
pub fn register(manager: &Manager) -> Result<ControllerHandle, controller::Error> {
    Controller::new(manager)
        .for_(Watch::of::<Memcached>())
        .owns(Watch::of::<Deployment>())
        // Pods map back to their Memcached by label; watching them also caches them.
        .watches(Watch::of::<Pod>(), |pod: &Pod| {
            let namespace = pod.namespace()?;
            let instance = pod.labels().get(INSTANCE_LABEL)?;
            ObjectKey::new(Some(&namespace), instance).ok()
        })
        .build(MemcachedReconciler)
}

/// Keeps a Memcached's Deployment and status.
#[derive(Clone, Copy, Debug)]
pub struct MemcachedReconciler;

impl Reconciler<Memcached> for MemcachedReconciler {
    type Error = ReconcileError;

    async fn reconcile(
        &self,
        request: Request,
        ctx: Context<Memcached>,
    ) -> Result<Action, ReconcileError> {
        // Deleted: the garbage collector removes the Deployment it owned.
        let Some(memcached) = ctx.get() else {
            return Ok(Action::done());
        };
        let namespace = request.namespace().unwrap_or("default");
        let deployments: Api<Deployment> = Api::namespaced(ctx.client().clone(), namespace);
        let mut not_ours = None;
        create_or_update(&deployments, &memcached.name_any(), |deployment| {
            match set_controller_reference(memcached.as_ref(), deployment) {
                Ok(()) => deployment.spec = deployment_spec(&memcached),
                Err(error) => not_ours = Some(error),
            }
        })
        .await?;
        if let Some(error) = not_ours {
            ctx.warning_event("NotOwned", error.to_string());
            return Err(ReconcileError::terminal(error));
        }

        // The Pods come from the cache: listed by the label the Deployment gives them.
        let selector: Selector = [(INSTANCE_LABEL.to_owned(), memcached.name_any())]
            .into_iter()
            .collect();
        let mut nodes: Vec<String> = ctx
            .cache()
            .lister::<Pod>()?
            .namespace(namespace)
            .list(&selector)?
            .iter()
            .map(|pod| pod.name_any())
            .collect();
        nodes.sort();
        let status = MemcachedStatus { nodes };
        if memcached.status.as_ref() != Some(&status) {
            let patch = serde_json::json!({ "status": status });
            ctx.patch_status(&PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            ctx.normal_event(
                "Reconciled",
                format!(
                    "{} of {} Pods listed",
                    status.nodes.len(),
                    memcached.spec.size
                ),
            );
        }
        Ok(Action::done())
    }
}

/// `size` memcached Pods labelled with the instance's name.
fn deployment_spec(memcached: &Arc<Memcached>) -> DeploymentSpec {
    let labels = [(INSTANCE_LABEL.to_owned(), memcached.name_any())].into();
    DeploymentSpec {
        replicas: Some(memcached.spec.size),
        selector: LabelSelector {
            match_labels: Some(labels),
            ..LabelSelector::default()
        },
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some([(INSTANCE_LABEL.to_owned(), memcached.name_any())].into()),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "memcached".to_owned(),
                    image: Some("memcached:1.6-alpine".to_owned()),
                    command: Some(vec!["memcached".into(), "-m=64".into(), "-vv".into()]),
                    ports: Some(vec![ContainerPort {
                        container_port: 11211,
                        name: Some("memcached".to_owned()),
                        ..ContainerPort::default()
                    }]),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
        },
        ..DeploymentSpec::default()
    }
}
