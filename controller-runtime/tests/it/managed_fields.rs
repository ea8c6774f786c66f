//! The manager strips `metadata.managedFields` from cached objects by default, and keeps them
//! when told to.

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kube_rt_controller_runtime::controller::{
    Action, Context, Controller, Request, Watch, reconciler_fn,
};

async fn cached_managed_fields(strip: bool) -> Option<Vec<ManagedFieldsEntry>> {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let mut obj = cm("a", "1");
    obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
        manager: Some("kubectl".into()),
        operation: Some("Update".into()),
        ..ManagedFieldsEntry::default()
    }]);
    server.create(&obj).unwrap();
    let manager = Arc::new(manager(&server).strip_managed_fields(strip).build());
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            |_req: Request, _ctx: Context<ConfigMap>| async { Ok::<_, Infallible>(Action::done()) },
        ))
        .unwrap();
    let running = spawn(&manager);
    let key = "default/a".parse().unwrap();
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
