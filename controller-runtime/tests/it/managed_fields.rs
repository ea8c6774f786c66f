//! The manager strips `metadata.managedFields` from cached objects by default, and keeps them
//! when told to. Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that
//! cluster.

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube::Api;
use kube::api::PostParams;

/// The managed fields of ConfigMap `a`, created by field manager `kubectl`, in the cache of a
/// manager that strips them or not.
async fn cached_managed_fields(strip: bool) -> Option<Vec<ManagedFieldsEntry>> {
    let server = TestCluster::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    let params = PostParams {
        field_manager: Some("kubectl".into()),
        ..PostParams::default()
    };
    api.create(&params, &own_cm("a", "1")).await.unwrap();
    let manager = Arc::new(manager(&server).strip_managed_fields(strip).build());
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .build(reconciler_fn(
            |_req: Request, _ctx: Context<ConfigMap>| async { Ok::<_, Infallible>(Action::done()) },
        ))
        .unwrap();
    let running = spawn(&manager);
    let key = format!("{}/a", ns()).parse().unwrap();
    eventually("the cache", Duration::from_secs(30), || {
        manager.cache().get::<ConfigMap>(&key).unwrap().is_some()
    })
    .await;
    let cached = manager.cache().get::<ConfigMap>(&key).unwrap().unwrap();
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
    cached.metadata.managed_fields.clone()
}

#[tokio::test(start_paused = true)]
async fn managed_fields_are_stripped_unless_opted_out() {
    assert_eq!(cached_managed_fields(true).await, None);
    let kept = cached_managed_fields(false)
        .await
        .expect("managed fields kept");
    assert_eq!(kept[0].manager.as_deref(), Some("kubectl"));
}

#[tokio::test]
async fn the_user_agent_names_the_operator_as_the_default_field_manager() {
    let server = TestCluster::start().await.unwrap();
    let mut config = server.config().unwrap();
    config.default_namespace = ns().into();
    let config = controller_runtime::util::with_user_agent(config, "my-operator", "0.3.0");
    let client = kube::Client::try_from(config).unwrap();
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client, ns());
    // No field manager named: the server takes the User-Agent up to its first `/`.
    let created = api
        .create(&kube::api::PostParams::default(), &cm("ua", "1"))
        .await
        .unwrap();
    let managers: Vec<_> = created
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|entry| entry.manager)
        .collect();
    assert_eq!(managers, ["my-operator"]);
    server.shutdown().await;
}
