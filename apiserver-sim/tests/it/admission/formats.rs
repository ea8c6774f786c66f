//! Admission of requests that are not plain JSON of a type stored as served: protobuf
//! bodies reach the webhooks as JSON objects and denials go back in protobuf when the
//! client negotiated it (a real server answers errors in the negotiated encoding); kinds
//! served in another form than stored (events.k8s.io events) reach the webhooks in the form
//! of the request's version, for create, patch and delete.

use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use serde_json::{Value, json};

use super::harness::{Reply, WebhookServer, admit, configuration, deny, webhook};
use super::{configure, send};
use crate::common;
use crate::common::pb::{self, ACCEPT, PROTOBUF};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";

fn config_map(name: &str) -> core::ConfigMap {
    core::ConfigMap {
        metadata: Some(meta::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        }),
        data: [("k".to_string(), "v".to_string())].into(),
        ..Default::default()
    }
}

/// A protobuf create is admitted on its JSON form; a denial answers a protobuf client with a
/// protobuf `Status` that keeps the webhook's code and message.
#[tokio::test]
async fn protobuf_bodies_are_admitted_and_denied_in_protobuf() {
    let server = common::server().await;
    let hook = WebhookServer::start(|_, r| {
        Reply::ok(if r["request"]["name"] == "no" {
            deny(r, json!({"code": 403, "message": "not this one"}))
        } else {
            admit(r, json!({}))
        })
    })
    .await;
    let rules = json!([{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                        "resources": ["configmaps"]}]);
    configure(
        &server,
        configuration(
            "ValidatingWebhookConfiguration",
            "check",
            vec![webhook(
                "check.example.com",
                hook.client_config("/v"),
                rules,
            )],
        ),
    );
    let post = |name: &'static str| {
        let server = &server;
        async move {
            common::raw(
                server,
                "POST",
                CMS,
                &[("Content-Type", PROTOBUF), ("Accept", ACCEPT)],
                &pb::wrap("v1", "ConfigMap", &config_map(name)),
            )
            .await
        }
    };
    let r = post("yes").await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let reviews = hook.reviews("/v");
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["object"]["data"], json!({"k": "v"}));
    assert_eq!(reviews[0]["object"]["metadata"]["name"], "yes");

    let r = post("no").await;
    assert_eq!(r.status, 403);
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let (av, kind, status): (_, _, meta::Status) = pb::decode(&r.bytes);
    assert_eq!((av.as_str(), kind.as_str()), ("v1", "Status"));
    assert_eq!(status.code, Some(403));
    assert_eq!(
        status.message.as_deref(),
        Some("admission webhook \"check.example.com\" denied the request: not this one")
    );
    assert_eq!(server.objects("", "configmaps").len(), 1);
}

/// An events.k8s.io event is stored as a core event, yet its webhooks see events.k8s.io
/// objects (`note`, `regarding`) as object and old object; a merge patch through admission
/// applies to the events.k8s.io form.
#[tokio::test]
async fn converted_kinds_reach_webhooks_in_the_requested_version() {
    let server = common::server().await;
    let hook = WebhookServer::start(|_, r| Reply::ok(admit(r, json!({})))).await;
    let rules = json!([{"operations": ["*"], "apiGroups": ["events.k8s.io"],
                        "apiVersions": ["v1"], "resources": ["events"]}]);
    configure(
        &server,
        configuration(
            "ValidatingWebhookConfiguration",
            "events",
            vec![webhook(
                "events.example.com",
                hook.client_config("/e"),
                rules,
            )],
        ),
    );
    let event = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "scaled"}, "eventTime": "2025-03-01T10:00:00.000000Z",
        "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
        "action": "Scale", "reason": "Scaled", "type": "Normal", "note": "scaled to 3",
        "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"}});
    let r = send(&server, "POST", EVENTS, &event).await;
    assert_eq!(r.status, 201, "{}", r.body);
    let r = send(
        &server,
        "PATCH",
        &format!("{EVENTS}/scaled"),
        &json!({"note": "scaled to 4"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let body: Value = serde_json::from_str(&r.body).expect("json");
    assert_eq!(body["apiVersion"], "events.k8s.io/v1");
    assert_eq!(body["note"], "scaled to 4");
    let stored = &server.objects("", "events")[0];
    assert_eq!(stored["message"], "scaled to 4");
    assert_eq!(stored["involvedObject"]["name"], "web");
    let r = send(&server, "DELETE", &format!("{EVENTS}/scaled"), &Value::Null).await;
    assert_eq!(r.status, 200, "{}", r.body);

    let reviews = hook.reviews("/e");
    let ops: Vec<&str> = reviews
        .iter()
        .map(|r| r["operation"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ops, ["CREATE", "UPDATE", "DELETE"]);
    assert_eq!(reviews[0]["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(reviews[0]["object"]["note"], "scaled to 3");
    assert_eq!(reviews[1]["oldObject"]["note"], "scaled to 3");
    assert_eq!(reviews[1]["object"]["note"], "scaled to 4");
    assert_eq!(reviews[1]["object"]["regarding"]["name"], "web");
    assert_eq!(reviews[2]["oldObject"]["note"], "scaled to 4");
    assert!(server.objects("", "events").is_empty());
}
