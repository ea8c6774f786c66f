//! CustomResourceDefinitions: establishment, CRUD on the custom resource, status
//! subresource, generation, schema validation, discovery/OpenAPI, deletion.

use crate::common;

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::runtime::{conditions, wait::await_condition};
use kube::{Discovery, ResourceExt};
use serde_json::json;

fn code(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason),
        other => (0, other.to_string()),
    }
}

pub fn foo_crd(scope: &str, plural: &str, kind: &str) -> serde_json::Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.samplecontroller.k8s.io")},
        "spec": {"group": "samplecontroller.k8s.io", "scope": scope,
            "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind, "shortNames": ["fo"]},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": true,
                 "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                                                          "statusReplicasPath": ".status.availableReplicas"}},
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "deploymentName": {"type": "string"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10}}},
                    "status": {"type": "object", "properties": {"availableReplicas": {"type": "integer"}}}}}}},
                {"name": "v1beta1", "served": true, "storage": false, "subresources": {"status": {}}}
            ]}
    })
}

async fn install(server: &apiserver_sim::ApiServer, crd: serde_json::Value) {
    let crds: Api<CustomResourceDefinition> = Api::all(server.client().expect("client"));
    let crd: CustomResourceDefinition = serde_json::from_value(crd).expect("crd");
    let name = crd.name_any();
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("create crd");
    let established = tokio::time::timeout(
        Duration::from_secs(10),
        await_condition(crds, &name, conditions::is_crd_established()),
    )
    .await;
    assert!(matches!(established, Ok(Ok(_))), "CRD established");
}

fn foo_api(server: &apiserver_sim::ApiServer, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("samplecontroller.k8s.io", version, "Foo");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "foos");
    Api::namespaced_with(server.client().expect("client"), "default", &ar)
}

#[tokio::test]
async fn custom_resource_lifecycle() {
    let server = common::server().await;
    // Not served before the CRD exists: kube-apiserver's plain-text `404 page not found`,
    // which kube cannot read as a `Status`.
    let foos = foo_api(&server, "v1alpha1");
    let err = foos
        .list(&ListParams::default())
        .await
        .expect_err("not served yet");
    assert_eq!(code(err), (404, "Failed to parse error data".into()));
    install(&server, foo_crd("Namespaced", "foos", "Foo")).await;

    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "example"}, "spec": {"deploymentName": "d", "replicas": 1},
        "status": {"availableReplicas": 5}}))
    .expect("foo");
    let created = foos
        .create(&PostParams::default(), &obj)
        .await
        .expect("create cr");
    assert_eq!(created.metadata.generation, Some(1));
    assert!(
        created.data.get("status").is_none(),
        "status dropped on create"
    );
    // Metadata change: same generation; spec change: bump.
    let p = foos
        .patch(
            "example",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .expect("label");
    assert_eq!(p.metadata.generation, Some(1));
    let p = foos
        .patch(
            "example",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .expect("spec");
    assert_eq!(p.metadata.generation, Some(2));
    // Status subresource.
    let s = foos
        .patch_status(
            "example",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"availableReplicas": 2}})),
        )
        .await
        .expect("status");
    assert_eq!(s.data["status"]["availableReplicas"], 2);
    assert_eq!(s.metadata.generation, Some(2));
    // Scale subresource from specReplicasPath / statusReplicasPath.
    let scale = foos.get_scale("example").await.expect("cr scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(2));
    assert_eq!(scale.status.map(|s| s.replicas), Some(2));
    foos.patch_scale(
        "example",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 3}})),
    )
    .await
    .expect("patch cr scale");
    let scaled = foos.get("example").await.expect("get");
    assert_eq!(scaled.data["spec"]["replicas"], 3);
    assert_eq!(scaled.metadata.generation, Some(3));
    foos.patch(
        "example",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 2}})),
    )
    .await
    .expect("back to 2");
    let s = foos.get("example").await.expect("get");
    // Stale replace conflicts; PUT without RV is invalid for CRs.
    let err = foos
        .replace("example", &PostParams::default(), &created)
        .await
        .expect_err("stale");
    assert_eq!(code(err), (409, "Conflict".into()));
    let mut no_rv = s.clone();
    no_rv.metadata.resource_version = None;
    let err = foos
        .replace("example", &PostParams::default(), &no_rv)
        .await
        .expect_err("no rv");
    assert_eq!(code(err), (422, "Invalid".into()));
    // Strategic merge is not served for CRs.
    let err = foos
        .patch(
            "example",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect_err("strategic");
    assert_eq!(code(err), (415, "UnsupportedMediaType".into()));
    // Schema bounds.
    let err = foos
        .patch(
            "example",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 11}})),
        )
        .await
        .expect_err("out of range");
    assert_eq!(code(err), (422, "Invalid".into()));
    // Unknown fields: pruned by default, rejected with fieldValidation=Strict.
    let pruned = foos
        .patch(
            "example",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"bogus": 1}, "extra": true})),
        )
        .await
        .expect("pruned");
    assert!(pruned.data["spec"].get("bogus").is_none() && pruned.data.get("extra").is_none());
    // ... each with a warning, as upstream's default `fieldValidation=Warn` sends them.
    let warned = common::raw(
        &server,
        "PATCH",
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos/example",
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"spec": {"bogus": 1}, "extra": true}"#,
    )
    .await;
    assert_eq!(warned.status, 200, "{}", warned.body);
    let warnings: Vec<&str> = warned
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("warning"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(
        warnings,
        [
            r#"299 - "unknown field \"extra\"""#,
            r#"299 - "unknown field \"spec.bogus\"""#
        ]
    );
    let strict = PatchParams {
        field_validation: Some(kube::api::ValidationDirective::Strict),
        ..Default::default()
    };
    let err = foos
        .patch(
            "example",
            &strict,
            &Patch::Merge(json!({"spec": {"bogus": 1}})),
        )
        .await
        .expect_err("strict");
    assert_eq!(code(err), (400, "BadRequest".into()));
    // Server-side apply works on CRs (forced: the creator owns spec.replicas).
    let applied = foos
        .patch(
            "example",
            &PatchParams::apply("test").force(),
            &Patch::Apply(
                json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                                 "metadata": {"name": "example"}, "spec": {"replicas": 4}}),
            ),
        )
        .await
        .expect("apply");
    assert_eq!(applied.data["spec"]["replicas"], 4);
    assert_eq!(applied.data["spec"]["deploymentName"], "d");
    // Every served version answers, with its own apiVersion.
    let beta = foo_api(&server, "v1beta1")
        .get("example")
        .await
        .expect("v1beta1");
    assert_eq!(
        beta.types.map(|t| t.api_version).as_deref(),
        Some("samplecontroller.k8s.io/v1beta1")
    );

    // Discovery and OpenAPI list the new type.
    let discovery = Discovery::new(server.client().expect("client"))
        .run()
        .await
        .expect("discovery");
    let found = discovery
        .groups()
        .flat_map(|g| g.recommended_resources())
        .any(|(ar, _)| ar.plural == "foos");
    assert!(found, "foos in discovery");
    let index = common::raw(&server, "GET", "/openapi/v3", &[], b"")
        .await
        .json();
    assert!(
        index["paths"]["apis/samplecontroller.k8s.io/v1alpha1"]["serverRelativeURL"].is_string()
    );

    // A watch from before the type existed is too old for its history.
    let foos_path = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos";
    let (_, evs) = common::watch_events(
        &server,
        &format!("{foos_path}?watch=1&resourceVersion=1001"),
        1,
    )
    .await;
    assert_eq!(evs[0]["object"]["code"], 410);

    // Deleting the CRD removes its objects, stops serving and ends open watches.
    let rv = server.resource_version();
    let path = format!("{foos_path}?watch=1&resourceVersion={rv}");
    let open = common::watch_until_closed(&server, &path);
    let delete = async {
        let crds: Api<CustomResourceDefinition> = Api::all(server.client().expect("client"));
        common::eventually("one open watch", common::LIMIT, || {
            server.open_watches() == 1
        })
        .await;
        crds.delete("foos.samplecontroller.k8s.io", &DeleteParams::default())
            .await
            .expect("delete crd");
        server.settle().await;
    };
    let (closed, ()) = tokio::join!(open, delete);
    let (status, evs) = closed.expect("deleting the CRD ends open watches of its resource");
    assert_eq!(status, 200);
    assert!(
        common::types(&evs)
            .iter()
            .all(|t| t == "MODIFIED" || t == "DELETED"),
        "{evs:?}"
    );
    let last = evs
        .last()
        .expect("the custom resource's deletion is watched");
    assert_eq!(
        (
            last["type"].as_str(),
            last["object"]["metadata"]["name"].as_str()
        ),
        (Some("DELETED"), Some("example"))
    );
    let crds: Api<CustomResourceDefinition> = Api::all(server.client().expect("client"));
    assert!(
        crds.get_opt("foos.samplecontroller.k8s.io")
            .await
            .expect("get")
            .is_none()
    );
    let err = foos.list(&ListParams::default()).await.expect_err("gone");
    assert_eq!(code(err), (404, "Failed to parse error data".into()));
    let r = common::raw(
        &server,
        "GET",
        "/apis/samplecontroller.k8s.io/v1alpha1",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 404);
    let index = common::raw(&server, "GET", "/openapi/v3", &[], b"")
        .await
        .json();
    assert!(index["paths"]["apis/samplecontroller.k8s.io/v1alpha1"].is_null());
    // Its objects are gone for good: a re-created CRD starts empty.
    install(&server, foo_crd("Namespaced", "foos", "Foo")).await;
    assert!(
        foos.list(&ListParams::default())
            .await
            .expect("served again")
            .items
            .is_empty()
    );
}

/// A version without a declared status subresource: `/status` is not served and `status`
/// is ordinary content (written by the main endpoint, bumping generation).
#[tokio::test]
async fn custom_resource_without_status_subresource() {
    let server = common::server().await;
    let mut crd = foo_crd("Namespaced", "foos", "Foo");
    for v in crd["spec"]["versions"].as_array_mut().into_iter().flatten() {
        if let Some(v) = v.as_object_mut() {
            v.remove("subresources");
        }
    }
    install(&server, crd).await;
    let foos = foo_api(&server, "v1alpha1");
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "plain"}, "spec": {"replicas": 1},
        "status": {"availableReplicas": 1}}))
    .expect("foo");
    let created = foos
        .create(&PostParams::default(), &obj)
        .await
        .expect("create");
    assert_eq!(
        created.data["status"]["availableReplicas"], 1,
        "status kept"
    );
    let err = foos
        .patch_status(
            "plain",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"availableReplicas": 2}})),
        )
        .await
        .expect_err("no status subresource");
    assert_eq!(code(err), (404, "NotFound".into()));
    let err = foos
        .get_scale("plain")
        .await
        .expect_err("no scale subresource");
    assert_eq!(code(err), (404, "NotFound".into()));
    let p = foos
        .patch(
            "plain",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"availableReplicas": 2}})),
        )
        .await
        .expect("status through the main endpoint");
    assert_eq!(p.data["status"]["availableReplicas"], 2);
    assert_eq!(
        p.metadata.generation,
        Some(2),
        "a status change bumps generation"
    );
    let discovery = common::raw(
        &server,
        "GET",
        "/apis/samplecontroller.k8s.io/v1alpha1",
        &[],
        b"",
    )
    .await
    .json();
    let names: Vec<&str> = discovery["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, vec!["foos"]);
}

#[tokio::test]
async fn cluster_scoped_custom_resource() {
    let server = common::server().await;
    install(&server, foo_crd("Cluster", "bars", "Bar")).await;
    let gvk = GroupVersionKind::gvk("samplecontroller.k8s.io", "v1alpha1", "Bar");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "bars");
    let bars: Api<DynamicObject> = Api::all_with(server.client().expect("client"), &ar);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Bar", "metadata": {"name": "b"}}))
    .expect("bar");
    let created = bars
        .create(&PostParams::default(), &obj)
        .await
        .expect("create");
    assert_eq!(created.metadata.namespace, None);
    assert_eq!(
        bars.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len(),
        1
    );
    bars.delete("b", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(bars.get_opt("b").await.expect("get").is_none());
}

#[tokio::test]
async fn install_crd_returns_once_the_custom_resources_are_served() {
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let crd: CustomResourceDefinition =
        serde_json::from_value(foo_crd("Namespaced", "foos", "Foo")).unwrap();

    let installed = server.install_crd(&crd).await.unwrap();
    let established = installed
        .status
        .and_then(|status| status.conditions)
        .unwrap_or_default()
        .into_iter()
        .any(|c| c.type_ == "Established" && c.status == "True");
    assert!(established);
    // Served at once: no polling between the install and the first request.
    let foos = foo_api(&server, "v1alpha1");
    foos.create(
        &PostParams::default(),
        &serde_json::from_value(json!({
            "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": "first"}, "spec": {"replicas": 1}
        }))
        .unwrap(),
    )
    .await
    .unwrap();

    // A second install of the same CRD is the real server's 409.
    let again = server.install_crd(&crd).await.unwrap_err();
    assert!(
        matches!(&again, apiserver_sim::Error::Api(status) if status.code == 409 && status.reason == "AlreadyExists"),
        "{again}"
    );
}
