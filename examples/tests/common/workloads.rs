//! The test environment for tests that follow a Foo's workload to its end: Running Pods, the
//! Foo's `availableReplicas`, the garbage collector removing what a deleted Foo owned. On the
//! simulator its workload simulator runs the Pods and its own garbage collector collects; on a
//! real cluster they are the cluster's, when it has them (a whole cluster: controller-manager,
//! scheduler, nodes), which [`FooEnv::start`] asks the cluster. A step whose part the cluster
//! lacks (a bare API server) is skipped with testenv's notice.

use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use testenv::TestEnv;

/// How long a step of a workload may take on a loaded machine (pods scheduled, started and
/// Ready by the hollow kubelets of a test cluster; deleted pods removed).
pub const WORKLOAD_TIMEOUT: Duration = Duration::from_secs(90);
/// How long the simulator's kubelet takes to start a pod (or remove a deleted one).
const SIM_POD_DELAY: Duration = Duration::from_millis(200);

/// The test environment with the Foo CRD, and what its server runs besides the API.
pub struct FooEnv {
    pub env: TestEnv,
    /// Dependents of a deleted owner are deleted by the server.
    pub collects_garbage: bool,
    /// Deployments get ReplicaSets and Pods, which nodes run.
    pub runs_pods: bool,
}

impl FooEnv {
    /// Starts the environment with `crd` installed: the simulator with its workload simulator,
    /// or the real cluster, probed for a garbage collector and nodes.
    pub async fn start(
        crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    ) -> Result<Self, String> {
        let mut builder = TestEnv::builder().crd(crd).timeout(WORKLOAD_TIMEOUT);
        if !testenv::on_existing_cluster() {
            builder = builder.server(|server| server.workload_simulator(SIM_POD_DELAY));
        }
        let env = builder.start().await.map_err(|e| e.to_string())?;
        if env.simulator().is_some() {
            return Ok(Self {
                env,
                collects_garbage: true,
                runs_pods: true,
            });
        }
        let collects_garbage = env.collects_garbage().await.map_err(|e| e.to_string())?;
        let runs_pods = match env.existing_cluster() {
            Some(cluster) => cluster.runs_pods().await.map_err(|e| e.to_string())?,
            None => false,
        };
        Ok(Self {
            env,
            collects_garbage,
            runs_pods,
        })
    }

    /// Prints testenv's skip notice, once for the test, when the cluster lacks what a step
    /// needs: the garbage collector for `collection_step`, workload controllers and nodes for
    /// `pods_step`. The test then leaves out the steps whose flag is false.
    pub fn notice_skipped_steps(&self, pods_step: &str, collection_step: &str) {
        let mut missing = Vec::new();
        if !self.runs_pods {
            missing.push(format!("workload controllers and nodes ({pods_step})"));
        }
        if !self.collects_garbage {
            missing.push(format!("garbage collector ({collection_step})"));
        }
        if !missing.is_empty() {
            testenv::skip_on_existing_cluster(&missing.join(", "));
        }
    }

    /// The names of the Pods of the environment's namespace that match `selector` and are
    /// Running and Ready, not being deleted.
    pub async fn ready_pods(&self, selector: &str) -> Vec<String> {
        let pods: Api<Pod> = Api::namespaced(self.env.client(), self.env.namespace());
        let listed = pods
            .list(&ListParams::default().labels(selector))
            .await
            .map(|list| list.items)
            .unwrap_or_default();
        let mut ready: Vec<String> = listed
            .into_iter()
            .filter(|pod| pod.metadata.deletion_timestamp.is_none() && is_ready(pod))
            .filter_map(|pod| pod.metadata.name)
            .collect();
        ready.sort();
        ready
    }

    /// Waits until the namespace's Deployment `name` is gone (collected once its Foo was
    /// deleted); panics with the step's name when the environment's timeout runs out.
    pub async fn deployment_collected(&self, name: &str) {
        let deployments: Api<Deployment> = Api::namespaced(self.env.client(), self.env.namespace());
        let what = format!("the Deployment {name} collected");
        self.env
            .eventually(&what, || async {
                let left = deployments.get_opt(name).await;
                matches!(left, Ok(None)).then_some(())
            })
            .await
            .unwrap();
    }

    /// How many Pods of the namespace match `selector`, being deleted or not.
    pub async fn pods(&self, selector: &str) -> Option<usize> {
        let pods: Api<Pod> = Api::namespaced(self.env.client(), self.env.namespace());
        let listed = pods.list(&ListParams::default().labels(selector)).await;
        listed.ok().map(|list| list.items.len())
    }
}

/// A Pod in phase `Running` with its `Ready` condition true.
fn is_ready(pod: &Pod) -> bool {
    let Some(status) = &pod.status else {
        return false;
    };
    status.phase.as_deref() == Some("Running")
        && status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_ == "Ready" && c.status == "True")
}
