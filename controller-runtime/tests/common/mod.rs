//! Helpers shared by the integration tests: objects on the simulator, a running manager, a
//! recording reconciler, and polling with a deadline.

#![allow(dead_code, unused_imports)]

use std::collections::BTreeMap;
use std::sync::Arc;

use apiserver_sim::ApiServer;
use controller_runtime::cache::DynamicKind;
use controller_runtime::controller::predicate::{MetaFn, meta_fn};
use controller_runtime::manager::{Manager, ManagerBuilder};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, OwnerReference};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use parking_lot::Mutex;
use tokio::task::JoinHandle;

pub use testkit::cluster::{Server, TestCluster, ns};
pub use testkit::config_maps::{NS, OWN_LABEL, cm, is_own_meta, own_cm, put};
pub use testkit::eventually;

/// A valid Deployment in the test namespace: one container, a selector matching its pods.
pub fn deployment(name: &str) -> Deployment {
    let labels: BTreeMap<String, String> = [("app".to_owned(), name.to_owned())].into();
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns().into()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "web".into(),
                        image: Some("nginx".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// A secret in the test namespace with the given owner references.
pub fn secret(name: &str, owners: Vec<OwnerReference>) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns().into()),
            owner_references: Some(owners),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

/// An owner reference.
pub fn owner_ref(
    api_version: &str,
    kind: &str,
    name: &str,
    uid: &str,
    controller: bool,
) -> OwnerReference {
    OwnerReference {
        api_version: api_version.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.into(),
        controller: Some(controller),
        block_owner_deletion: None,
    }
}

/// Installs `crd` on the server and returns its kind (its first version) as discovery
/// describes it.
pub async fn install(server: &impl Server, crd: &CustomResourceDefinition) -> DynamicKind {
    let client = server.test_client().unwrap();
    server.install_test_crd(crd).await.unwrap();
    let spec = &crd.spec;
    DynamicKind::discover(
        &client,
        &spec.group,
        &spec.versions[0].name,
        &spec.names.kind,
    )
    .await
    .unwrap()
}

/// A manager builder over the server that ignores process signals (on an existing cluster,
/// shared with others, caching [`ns`]`()` only).
pub fn manager(server: &impl Server) -> ManagerBuilder {
    let builder = Manager::builder(server.test_client().unwrap()).handle_signals(false);
    if server.is_shared() {
        builder.namespace(ns())
    } else {
        builder
    }
}

/// The predicate that lets a controller's watch pass the test's objects only ([`own_cm`]), so
/// that its queue, reconciles and their metrics count those alone, on any server.
pub fn own_only() -> MetaFn<fn(&ObjectMeta) -> bool> {
    meta_fn(is_own_meta)
}

/// Runs `manager.start()` in the background.
pub fn spawn(manager: &Arc<Manager>) -> JoinHandle<Result<(), controller_runtime::manager::Error>> {
    let manager = Arc::clone(manager);
    tokio::spawn(async move { manager.start().await })
}

/// Counts reconciles per key.
#[derive(Clone, Debug, Default)]
pub struct Counts(Arc<Mutex<BTreeMap<String, usize>>>);

impl Counts {
    pub fn hit(&self, key: &str) {
        *self.0.lock().entry(key.to_owned()).or_default() += 1;
    }

    pub fn get(&self, key: &str) -> usize {
        self.0.lock().get(key).copied().unwrap_or(0)
    }

    pub fn total(&self) -> usize {
        self.0.lock().values().sum()
    }
}

/// Runs the async test `$test` (a function of the manager's default
/// [`Storage`](controller_runtime::cache::Storage)) as two tests, `$test::typed` and
/// `$test::compact`. The `tokio::test` arguments follow the name.
#[macro_export]
macro_rules! on_both_storages {
    ($test:ident $(, $($arg:tt)*)?) => {
        mod $test {
            #[tokio::test$(($($arg)*))?]
            async fn typed() {
                super::$test(controller_runtime::cache::Storage::typed()).await;
            }

            #[tokio::test$(($($arg)*))?]
            async fn compact() {
                super::$test(controller_runtime::cache::Storage::compact()).await;
            }
        }
    };
}
