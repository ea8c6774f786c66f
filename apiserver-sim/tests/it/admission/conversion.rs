//! CRD conversion webhooks (Kubernetes docs, "Versions in CustomResourceDefinitions: Webhook
//! conversion"): with `strategy: Webhook` every read or write in a version other than the
//! stored one goes through a `ConversionReview` (get, list, watch, create, patch); reads in
//! the stored version do not.

use apiserver_sim::ApiServer;
use serde_json::{Value, json};

use super::harness::{Reply, WebhookServer};
use super::matching::two_version_crd;
use super::send;
use crate::common;

/// Converts widgets: v1 keeps the count in `spec.size`, v2 in `spec.replicas`. Refuses
/// objects named `broken`.
fn convert(review: &Value) -> Value {
    let req = &review["request"];
    let desired = req["desiredAPIVersion"].as_str().unwrap_or("").to_string();
    let mut failed = None;
    let objects: Vec<Value> = req["objects"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|o| {
            if o["metadata"]["name"] == "broken" {
                failed = Some("cannot convert broken");
            }
            let mut o = o.clone();
            let (from, to) = if desired.ends_with("/v2") {
                ("size", "replicas")
            } else {
                ("replicas", "size")
            };
            if let Some(spec) = o["spec"].as_object_mut()
                && let Some(n) = spec.remove(from)
            {
                spec.insert(to.into(), n);
            }
            o["apiVersion"] = json!(desired);
            o
        })
        .collect();
    let result = match failed {
        Some(m) => json!({"status": "Failure", "message": m}),
        None => json!({"status": "Success"}),
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
           "response": {"uid": req["uid"], "convertedObjects": objects, "result": result}})
}

async fn setup() -> (ApiServer, WebhookServer) {
    let hook = WebhookServer::start(|_, r| Reply::ok(convert(r))).await;
    let server = ApiServer::builder()
        .service_endpoint("webhooks", "hook", Some(443), &hook.url)
        .start()
        .await
        .expect("server");
    let conversion = json!({"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"service": {"namespace": "webhooks", "name": "hook", "path": "/convert"},
                         "caBundle": hook.ca_bundle}}});
    server
        .create_json(two_version_crd(conversion))
        .expect("crd");
    server.settle().await;
    (server, hook)
}

const V1: &str = "/apis/example.com/v1/namespaces/default/widgets";
const V2: &str = "/apis/example.com/v2/namespaces/default/widgets";

fn widget(version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

/// Writes in v2 are stored in v1 and answered in v2; reads in v2 (get, list, watch) are
/// converted; reads in v1 call no webhook.
#[tokio::test]
async fn conversion_on_write_get_list_and_watch() {
    let (server, hook) = setup().await;
    let r = send(
        &server,
        "POST",
        V2,
        &widget("v2", "a", json!({"replicas": 3})),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        (r.json()["apiVersion"].clone(), r.json()["spec"].clone()),
        (json!("example.com/v2"), json!({"replicas": 3}))
    );
    let stored = &server.objects("example.com", "widgets")[0];
    assert_eq!(
        (stored["apiVersion"].clone(), stored["spec"].clone()),
        (json!("example.com/v1"), json!({"size": 3}))
    );
    let reviews = hook.reviews("/convert");
    assert_eq!(reviews.len(), 2, "to storage, and back for the answer");
    assert_eq!(reviews[0]["desiredAPIVersion"], "example.com/v1");
    assert_eq!(reviews[1]["desiredAPIVersion"], "example.com/v2");

    let before = hook.requests.lock().len();
    let r = send(&server, "GET", &format!("{V1}/a"), &Value::Null).await;
    assert_eq!(r.json()["spec"], json!({"size": 3}));
    assert_eq!(
        hook.requests.lock().len(),
        before,
        "the stored version needs no conversion"
    );
    let r = send(&server, "GET", &format!("{V2}/a"), &Value::Null).await;
    assert_eq!(
        (r.status, r.json()["spec"].clone()),
        (200, json!({"replicas": 3}))
    );

    assert_eq!(
        send(&server, "POST", V1, &widget("v1", "b", json!({"size": 1})))
            .await
            .status,
        201
    );
    let before = hook.requests.lock().len();
    let r = send(&server, "GET", V2, &Value::Null).await;
    let items = r.json()["items"].clone();
    assert_eq!(items.as_array().map(Vec::len), Some(2));
    assert!(
        items
            .as_array()
            .into_iter()
            .flatten()
            .all(|i| i["apiVersion"] == "example.com/v2" && i["spec"].get("replicas").is_some())
    );
    assert_eq!(
        hook.requests.lock().len(),
        before + 1,
        "one review for the whole page"
    );

    let (code, events) = common::watch_events(&server, &format!("{V2}?watch=1"), 2).await;
    assert_eq!(code, 200);
    assert_eq!(events.len(), 2);
    for ev in &events {
        assert_eq!(ev["object"]["apiVersion"], "example.com/v2");
        assert!(ev["object"]["spec"].get("replicas").is_some(), "{ev}");
    }

    let r = send(
        &server,
        "PATCH",
        &format!("{V2}/a"),
        &json!({"spec": {"replicas": 5}}),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["spec"].clone()),
        (200, json!({"replicas": 5})),
        "{}",
        r.body
    );
    let stored = server.objects("example.com", "widgets");
    assert_eq!(stored[0]["spec"], json!({"size": 5}));
}

/// apiextensions-apiserver webhook converter: a failed conversion is an internal error
/// naming the kind and the webhook's message.
#[tokio::test]
async fn failed_conversion_is_an_internal_error() {
    let (server, _hook) = setup().await;
    assert_eq!(
        send(
            &server,
            "POST",
            V1,
            &widget("v1", "broken", json!({"size": 1}))
        )
        .await
        .status,
        201
    );
    let r = send(&server, "GET", &format!("{V2}/broken"), &Value::Null).await;
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["message"],
        "Internal error occurred: conversion webhook for example.com/v1, Kind=Widget failed: cannot convert broken"
    );
}
