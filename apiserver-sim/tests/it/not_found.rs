//! 404s of paths the server does not serve, as kube-apiserver v1.36 answers them: plain text
//! `404 page not found` for unknown groups and top-level paths (Go's `http.NotFound`), a JSON
//! `Status` for unknown versions, resources and subresources of built-in groups (go-restful),
//! and the CRD handler's answers for custom resource groups (plain text for an unknown version
//! or resource, "object not found" for a subresource the CRD does not have).

use crate::common;
use crate::crd::foo_crd;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde_json::json;

/// Asserts Go's `http.NotFound` answer.
fn assert_page_not_found(r: &common::Raw, path: &str) {
    assert_eq!(r.status, 404, "{path}");
    assert_eq!(
        r.header("content-type"),
        Some("text/plain; charset=utf-8"),
        "{path}"
    );
    assert_eq!(
        r.header("x-content-type-options"),
        Some("nosniff"),
        "{path}"
    );
    assert_eq!(r.body, "404 page not found\n", "{path}");
}

/// Asserts go-restful's generic `NotFound` `Status`.
fn assert_generic_status(r: &common::Raw, path: &str) {
    assert_eq!(r.status, 404, "{path}");
    assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
    assert_eq!(
        r.json(),
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
               "message": "the server could not find the requested resource",
               "reason": "NotFound", "details": {}, "code": 404}),
        "{path}"
    );
}

#[tokio::test]
async fn unknown_paths_are_answered_as_kube_apiserver_answers_them() {
    let server = common::server().await;
    let crd: CustomResourceDefinition =
        serde_json::from_value(foo_crd("Namespaced", "foos", "Foo")).expect("crd");
    server.install_crd(&crd).await.expect("install");
    let foo = json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                     "metadata": {"name": "f", "namespace": "default"}});
    server.create_json(foo).expect("foo");
    let get = |path: &'static str| {
        let server = &server;
        async move { common::raw(server, "GET", path, &[], b"").await }
    };
    for path in [
        "/nope",
        "/apis/nope.example.com",
        "/apis/nope.example.com/v1",
        "/apis/nope.example.com/v1/foos",
        "/apis/nope.example.com/v1/namespaces/default/foos/x",
        "/apis/samplecontroller.k8s.io/v9",
        "/apis/samplecontroller.k8s.io/v9/foos",
        "/apis/samplecontroller.k8s.io/v1alpha1/bars",
        "/apis/samplecontroller.k8s.io/v1alpha1/foos/f",
    ] {
        assert_page_not_found(&get(path).await, path);
    }
    for path in [
        "/api/v2",
        "/api/v2/pods",
        "/api/v1/foos",
        "/apis/apps/v9",
        "/apis/apps/v9/deployments",
        "/apis/apps/v1/foos",
        "/apis/apps/v1/namespaces/default/foos",
        "/api/v1/namespaces/default/nodes/x",
        "/api/v1/configmaps/c",
        "/api/v1/namespaces/default/configmaps/c/status",
        "/api/v1/namespaces/default/pods/x/y/z/w",
    ] {
        assert_generic_status(&get(path).await, path);
    }
    // A subresource the CRD does not have: the object is "not found", even though it exists.
    let path = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos/f/nosuch";
    let r = get(path).await;
    assert_eq!(
        (r.status, r.header("content-type")),
        (404, Some("application/json"))
    );
    assert_eq!(
        r.json()["message"],
        "foos.samplecontroller.k8s.io \"f\" not found"
    );
    assert_eq!(r.json()["details"]["name"], "f");
    // The OpenAPI v3 document of a group version not served: 404 without a body.
    let r = get("/openapi/v3/apis/nope.example.com/v1").await;
    assert_eq!(
        (r.status, r.header("content-type"), r.body.as_str()),
        (404, None, "")
    );
}
