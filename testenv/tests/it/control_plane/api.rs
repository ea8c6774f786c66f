//! The control plane serves the Kubernetes API over TLS with its own CA, to its admin token,
//! behind the real RBAC authorizer; environments of a process share it, each in a namespace of
//! its own, with their CRDs served.

use std::sync::Arc;

use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube::{Client, CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use testenv::{ControlPlane, Error, TestEnv};

/// A kind the shared control plane's tests install.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "testenv.kube-rt.dev",
    version = "v1",
    kind = "Gizmo",
    namespaced
)]
pub struct GizmoSpec {
    size: i32,
}

#[tokio::test]
async fn a_control_plane_answers_its_admin_and_refuses_others_by_rbac() {
    let Some(assets) = testenv::assets_or_skip("its credentials and RBAC") else {
        return;
    };
    let plane = ControlPlane::start(&assets).await.unwrap();
    assert!(plane.url().starts_with("https://127.0.0.1:"), "{plane:?}");
    let names: Vec<_> = plane.processes().iter().map(|p| p.name).collect();
    assert_eq!(names, ["etcd", "kube-apiserver"]);
    let admin = plane.client().unwrap();
    let namespaces = Api::<Namespace>::all(admin.clone())
        .list(&Default::default())
        .await
        .unwrap();
    assert!(
        namespaces
            .items
            .iter()
            .any(|ns| ns.metadata.name.as_deref() == Some("kube-system")),
        "{namespaces:?}"
    );

    // A ServiceAccount's token from the TokenRequest API (the signing key works) authenticates,
    // and RBAC, with no binding for it, refuses it.
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "default");
    let mut account = ServiceAccount::default();
    account.metadata.name = Some("nobody".to_owned());
    accounts
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    let token = accounts
        .create_token_request("nobody", &PostParams::default(), &TokenRequest::default())
        .await
        .unwrap()
        .status
        .and_then(|status| status.token)
        .unwrap();
    assert_eq!(refusal(&plane, token).await, Some(403));
    // A token the server does not know is not authenticated at all.
    assert_eq!(refusal(&plane, "not-a-token".to_owned()).await, Some(401));
}

/// The HTTP status with which `plane` refuses to list Secrets to the bearer of `token` (`None`
/// if it lists them, or fails otherwise).
async fn refusal(plane: &ControlPlane, token: String) -> Option<u16> {
    let mut config = plane.config().unwrap();
    config.auth_info.token = Some(token.into());
    let client = Client::try_from(config).unwrap();
    match Api::<Secret>::namespaced(client, "default")
        .list(&Default::default())
        .await
    {
        Err(kube::Error::Api(status)) => Some(status.code),
        _ => None,
    }
}

#[tokio::test]
async fn environments_of_a_process_share_its_control_plane_in_namespaces_of_their_own() {
    let Some(assets) = testenv::assets_or_skip("one shared by the process") else {
        return;
    };
    let start = || {
        TestEnv::builder()
            .control_plane(&assets)
            .crd(Gizmo::crd())
            .start()
    };
    let (first, second) = tokio::join!(start(), start());
    let (first, second) = (first.unwrap(), second.unwrap());
    let (a, b) = (
        first.control_plane().unwrap(),
        second.control_plane().unwrap(),
    );
    assert_eq!(a.url(), b.url(), "one control plane for the process");
    assert!(std::ptr::eq(a, b));
    let shared = ControlPlane::shared(&assets).await.unwrap();
    assert!(std::ptr::eq(Arc::as_ptr(&shared), a));
    assert_ne!(first.namespace(), second.namespace());

    // The CRD is served: a Gizmo made in one environment's namespace is not in the other's.
    let gizmos: Api<Gizmo> = Api::default_namespaced(first.client());
    gizmos
        .create(
            &PostParams::default(),
            &Gizmo::new("g", GizmoSpec { size: 1 }),
        )
        .await
        .unwrap();
    let resource =
        ApiResource::from_gvk(&GroupVersionKind::gvk("testenv.kube-rt.dev", "v1", "Gizmo"));
    let elsewhere: Api<DynamicObject> =
        Api::namespaced_with(second.client(), second.namespace(), &resource);
    assert!(elsewhere.get_opt("g").await.unwrap().is_none());

    // Each environment's namespace goes with it; the control plane stays for the next.
    let namespace = first.namespace().to_owned();
    first.stop().await.unwrap();
    let namespaces: Api<Namespace> = Api::all(second.client());
    assert!(namespaces.get_opt(&namespace).await.unwrap().is_none());
    assert!(
        namespaces
            .get_opt(second.namespace())
            .await
            .unwrap()
            .is_some()
    );
}

#[tokio::test]
async fn a_directory_without_the_binaries_is_an_error_naming_what_is_missing() {
    let empty = tempfile::tempdir().unwrap();
    let error = ControlPlane::start(empty.path()).await.unwrap_err();
    assert!(matches!(&error, Error::ControlPlane { .. }), "{error}");
    assert!(
        error.to_string().contains("no executable kube-apiserver"),
        "{error}"
    );
    let error = TestEnv::builder()
        .control_plane(empty.path())
        .start()
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("no executable kube-apiserver"),
        "{error}"
    );
}
