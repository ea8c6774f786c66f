//! `create_or_update` creates, updates only on change, and `server_side_apply` merges a partial
//! object.

use crate::common;

use common::*;
use controller_runtime::{OperationResult, create_or_update, server_side_apply};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

#[tokio::test]
async fn create_or_update_writes_only_changes() {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), NS);
    let set = |value: &'static str| {
        move |cm: &mut ConfigMap| {
            cm.data = Some([("v".to_owned(), value.to_owned())].into());
        }
    };
    let (created, result) = create_or_update(&api, "a", set("1")).await.unwrap();
    assert_eq!(result, OperationResult::Created);
    let (same, result) = create_or_update(&api, "a", set("1")).await.unwrap();
    assert_eq!(result, OperationResult::Unchanged);
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );
    let (_, result) = create_or_update(&api, "a", set("2")).await.unwrap();
    assert_eq!(result, OperationResult::Updated);
    assert_eq!(
        server.list::<ConfigMap>()[0].data.as_ref().unwrap()["v"],
        "2"
    );

    let mut partial = cm("a", "3");
    partial.metadata.namespace = None;
    let applied = server_side_apply(&api, "my-controller", &partial)
        .await
        .unwrap();
    assert_eq!(applied.data.as_ref().unwrap()["v"], "3");
    server.shutdown().await;
}
