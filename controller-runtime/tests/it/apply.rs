//! `create_or_update` creates, updates only on change, and `server_side_apply` merges a partial
//! object.

use crate::common;

use common::*;
use controller_runtime::util::{OperationResult, create_or_update, server_side_apply};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

#[tokio::test]
async fn create_or_update_writes_only_changes() {
    let server = TestCluster::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
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
        server.list::<ConfigMap>().await.unwrap()[0]
            .data
            .as_ref()
            .unwrap()["v"],
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

/// A new object starts in the `Api`'s namespace, so `mutate` can make it owned by a namespaced
/// object (an owner reference on an object without a namespace is refused).
#[tokio::test]
async fn a_created_object_starts_in_the_apis_namespace() {
    let server = TestCluster::start().await.unwrap();
    let client = server.client().unwrap();
    let owner = server.create(&cm("owner", "1")).await.unwrap();
    let api: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(client, ns());
    let mut owned = Ok(());
    let (created, result) = create_or_update(&api, "child", |secret| {
        owned = controller_runtime::util::set_controller_reference(&owner, secret);
    })
    .await
    .unwrap();
    owned.unwrap();
    assert_eq!(result, OperationResult::Created);
    assert_eq!(created.metadata.namespace.as_deref(), Some(ns()));
    let reference = &created.metadata.owner_references.unwrap()[0];
    assert_eq!(reference.name, "owner");
    assert_eq!(reference.controller, Some(true));
    server.shutdown().await;
}

/// Server-side apply (Kubernetes docs, "Server-Side Apply: Conflicts" and "Using Server-Side
/// Apply in a controller"): the helper forces, so it takes a field another manager set, and the
/// managed fields of an object read back from the server are not sent (the server would refuse
/// an apply carrying them).
#[tokio::test]
async fn server_side_apply_takes_over_fields_and_drops_managed_fields() {
    let server = TestCluster::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    let created = api
        .create(
            &kube::api::PostParams {
                field_manager: Some("someone-else".into()),
                ..Default::default()
            },
            &cm("a", "1"),
        )
        .await
        .unwrap();
    assert!(created.metadata.managed_fields.is_some());

    let mut desired = created.clone();
    desired.data = Some([("v".to_owned(), "2".to_owned())].into());
    desired.metadata.resource_version = None;
    let applied = server_side_apply(&api, "my-controller", &desired)
        .await
        .unwrap();
    assert_eq!(applied.data.as_ref().unwrap()["v"], "2");
    let entries = applied.metadata.managed_fields.unwrap_or_default();
    let owns_value = |manager: &str| {
        entries.iter().any(|entry| {
            entry.manager.as_deref() == Some(manager)
                && entry
                    .fields_v1
                    .as_ref()
                    .is_some_and(|fields| fields.0.to_string().contains("f:v"))
        })
    };
    assert!(
        entries
            .iter()
            .any(|entry| entry.manager.as_deref() == Some("my-controller")
                && entry.operation.as_deref() == Some("Apply")),
        "{entries:?}"
    );
    assert!(owns_value("my-controller"), "{entries:?}");
    assert!(!owns_value("someone-else"), "{entries:?}");
    server.shutdown().await;
}
