//! `application/vnd.kubernetes.protobuf` for built-in kinds, checked with kube-rs's k8s-pb
//! structs (an implementation of the messages independent of the simulator's): bodies
//! created from protobuf are stored as the equivalent JSON, objects, lists, watch frames,
//! `Scale`s and `Status` errors go out in protobuf when the client prefers it. Sources: the
//! Kubernetes API concepts page, "Protobuf encoding" (the `k8s\0` prefix, the
//! `runtime.Unknown` envelope, length-prefixed watch frames, `Content-Type` of watches),
//! and client-go's typed clients (`Accept: application/vnd.kubernetes.protobuf,
//! application/json`).

use crate::common;
use crate::common::pb::{self, ACCEPT, PROTOBUF};

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::json;

fn meta_named(name: &str) -> Option<meta::ObjectMeta> {
    Some(meta::ObjectMeta {
        name: Some(name.into()),
        labels: [("app".to_string(), "web".to_string())].into(),
        ..Default::default()
    })
}

fn deployment(name: &str) -> apps::Deployment {
    apps::Deployment {
        metadata: meta_named(name),
        spec: Some(apps::DeploymentSpec {
            replicas: Some(2),
            selector: Some(meta::LabelSelector {
                match_labels: [("app".to_string(), "web".to_string())].into(),
                ..Default::default()
            }),
            strategy: Some(apps::DeploymentStrategy {
                r#type: Some("RollingUpdate".into()),
                rolling_update: Some(apps::RollingUpdateDeployment {
                    max_surge: Some(IntOrString {
                        r#type: Some(1),
                        int_val: Some(0),
                        str_val: Some("25%".into()),
                    }),
                    max_unavailable: Some(IntOrString {
                        r#type: Some(0),
                        int_val: Some(1),
                        str_val: Some(String::new()),
                    }),
                }),
            }),
            template: Some(core::PodTemplateSpec {
                metadata: meta_named(""),
                spec: Some(core::PodSpec {
                    containers: vec![core::Container {
                        name: Some("web".into()),
                        image: Some("nginx:1.27".into()),
                        ports: vec![core::ContainerPort {
                            container_port: Some(80),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            }),
            ..Default::default()
        }),
        status: None,
    }
}

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

#[tokio::test]
async fn create_from_a_protobuf_body_and_read_back_in_protobuf() {
    let server = common::server().await;
    let body = pb::wrap("apps/v1", "Deployment", &deployment("web"));
    let r = common::raw(
        &server,
        "POST",
        DEPLOYMENTS,
        &[("Content-Type", PROTOBUF), ("Accept", ACCEPT)],
        &body,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let (av, kind, created): (_, _, apps::Deployment) = pb::decode(&r.bytes);
    assert_eq!((av.as_str(), kind.as_str()), ("apps/v1", "Deployment"));
    let md = created.metadata.expect("metadata");
    assert!(md.uid.is_some_and(|u| !u.is_empty()));
    assert_eq!(md.generation, Some(1));
    let spec = created.spec.expect("spec");
    assert_eq!(spec.replicas, Some(2));
    let surge = spec
        .strategy
        .and_then(|s| s.rolling_update)
        .and_then(|r| r.max_surge)
        .expect("maxSurge");
    assert_eq!(surge.str_val.as_deref(), Some("25%"));

    // Stored as the JSON a JSON client would have sent.
    let stored = &server.objects("apps", "deployments")[0];
    assert_eq!(stored["spec"]["replicas"], 2);
    assert_eq!(
        stored["spec"]["strategy"]["rollingUpdate"],
        json!({"maxSurge": "25%", "maxUnavailable": 1})
    );
    assert_eq!(
        stored["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"],
        80
    );
    assert!(stored["metadata"].get("generateName").is_none(), "{stored}");

    let r = common::raw(
        &server,
        "GET",
        &format!("{DEPLOYMENTS}/web"),
        &[("Accept", ACCEPT)],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    let (_, _, got): (_, _, apps::Deployment) = pb::decode(&r.bytes);
    assert_eq!(
        got.metadata.and_then(|m| m.resource_version),
        md.resource_version
    );
    // A JSON client reads the same object in JSON.
    let r = common::raw(
        &server,
        "GET",
        &format!("{DEPLOYMENTS}/web"),
        &[("Accept", "application/json")],
        b"",
    )
    .await;
    assert_eq!(
        r.json()["spec"]["strategy"]["rollingUpdate"]["maxSurge"],
        "25%"
    );
}

#[tokio::test]
async fn bytes_maps_and_int_or_string_of_other_kinds() {
    let server = common::server().await;
    let secret = core::Secret {
        metadata: meta_named("creds"),
        data: [("token".to_string(), b"s3cr3t\x00\xff".to_vec())].into(),
        r#type: Some("Opaque".into()),
        ..Default::default()
    };
    let r = common::raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/secrets",
        &[("Content-Type", PROTOBUF), ("Accept", ACCEPT)],
        &pb::wrap("v1", "Secret", &secret),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let (_, _, back): (_, _, core::Secret) = pb::decode(&r.bytes);
    assert_eq!(
        back.data.get("token").map(Vec::as_slice),
        Some(b"s3cr3t\x00\xff".as_slice())
    );
    assert_eq!(
        server.objects("", "secrets")[0]["data"]["token"],
        "czNjcjN0AP8="
    );

    let svc = core::Service {
        metadata: meta_named("web"),
        spec: Some(core::ServiceSpec {
            ports: vec![core::ServicePort {
                port: Some(80),
                target_port: Some(IntOrString {
                    r#type: Some(0),
                    int_val: Some(8080),
                    str_val: None,
                }),
                protocol: Some("TCP".into()),
                ..Default::default()
            }],
            selector: [("app".to_string(), "web".to_string())].into(),
            ..Default::default()
        }),
        status: None,
    };
    let r = common::raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/services",
        &[("Content-Type", PROTOBUF)],
        &pb::wrap("v1", "Service", &svc),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(
        r.header("content-type"),
        Some("application/json"),
        "JSON when the client asks nothing else"
    );
    assert_eq!(
        server.objects("", "services")[0]["spec"]["ports"][0]["targetPort"],
        8080
    );
}

#[tokio::test]
async fn lists_and_watches_in_protobuf() {
    let server = common::server().await;
    let rv = server.resource_version();
    for name in ["a", "b"] {
        server
            .create_json(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default"}, "data": {"k": name}}))
            .expect("seed");
    }
    let r = common::raw(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[("Accept", ACCEPT)],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    let (_, kind, list): (_, _, core::ConfigMapList) = pb::decode(&r.bytes);
    assert_eq!(kind, "ConfigMapList");
    assert_eq!(list.items.len(), 2);
    assert_eq!(list.items[1].data.get("k").map(String::as_str), Some("b"));
    assert_eq!(
        list.metadata.and_then(|m| m.resource_version),
        Some(server.resource_version().to_string())
    );

    let path = format!(
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}&allowWatchBookmarks=true"
    );
    let (status, ct, frames) = pb::watch(&server, &path, 2).await;
    assert_eq!(status, 200);
    assert_eq!(ct, "application/vnd.kubernetes.protobuf;stream=watch");
    assert_eq!(frames[0].0, "ADDED");
    let (av, kind, cm): (_, _, core::ConfigMap) = pb::decode(&frames[1].1);
    assert_eq!((av.as_str(), kind.as_str()), ("v1", "ConfigMap"));
    assert_eq!(cm.metadata.and_then(|m| m.name).as_deref(), Some("b"));

    // A deployment watched from the start: the initial ADDED of a protobuf-created object.
    common::raw(
        &server,
        "POST",
        DEPLOYMENTS,
        &[("Content-Type", PROTOBUF)],
        &pb::wrap("apps/v1", "Deployment", &deployment("w")),
    )
    .await;
    let (_, _, frames) = pb::watch(&server, &format!("{DEPLOYMENTS}?watch=1"), 1).await;
    let (_, _, d): (_, _, apps::Deployment) = pb::decode(&frames[0].1);
    assert_eq!(d.spec.and_then(|s| s.replicas), Some(2));
}

#[tokio::test]
async fn scale_status_errors_and_delete_options_in_protobuf() {
    let server = common::server().await;
    common::raw(
        &server,
        "POST",
        DEPLOYMENTS,
        &[("Content-Type", PROTOBUF)],
        &pb::wrap("apps/v1", "Deployment", &deployment("web")),
    )
    .await;
    let r = common::raw(
        &server,
        "GET",
        &format!("{DEPLOYMENTS}/web/scale"),
        &[("Accept", ACCEPT)],
        b"",
    )
    .await;
    let (av, kind, scale): (_, _, k8s_pb::api::autoscaling::v1::Scale) = pb::decode(&r.bytes);
    assert_eq!((av.as_str(), kind.as_str()), ("autoscaling/v1", "Scale"));
    assert_eq!(scale.spec.as_ref().and_then(|s| s.replicas), Some(2));
    let mut scale = scale;
    scale.spec = Some(k8s_pb::api::autoscaling::v1::ScaleSpec { replicas: Some(5) });
    let r = common::raw(
        &server,
        "PUT",
        &format!("{DEPLOYMENTS}/web/scale"),
        &[("Content-Type", PROTOBUF), ("Accept", ACCEPT)],
        &pb::wrap("autoscaling/v1", "Scale", &scale),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        server.objects("apps", "deployments")[0]["spec"]["replicas"],
        5
    );

    let r = common::raw(
        &server,
        "GET",
        &format!("{DEPLOYMENTS}/missing"),
        &[("Accept", ACCEPT)],
        b"",
    )
    .await;
    assert_eq!(r.status, 404);
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let (av, kind, status): (_, _, meta::Status) = pb::decode(&r.bytes);
    assert_eq!((av.as_str(), kind.as_str()), ("v1", "Status"));
    assert_eq!(
        (status.code, status.reason.as_deref()),
        (Some(404), Some("NotFound"))
    );

    let opts = meta::DeleteOptions {
        propagation_policy: Some("Orphan".into()),
        ..Default::default()
    };
    let r = common::raw(
        &server,
        "DELETE",
        &format!("{DEPLOYMENTS}/web"),
        &[("Content-Type", PROTOBUF), ("Accept", ACCEPT)],
        &pb::wrap("v1", "DeleteOptions", &opts),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(server.objects("apps", "deployments").is_empty());
}

#[tokio::test]
async fn kinds_without_a_protobuf_form_answer_json_or_refuse_protobuf() {
    let server = common::server().await;
    // A malformed document is a 400, not a panic.
    let r = common::raw(
        &server,
        "POST",
        DEPLOYMENTS,
        &[("Content-Type", PROTOBUF)],
        b"k8s\x00\xff\xff",
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let r = common::raw(
        &server,
        "POST",
        DEPLOYMENTS,
        &[("Content-Type", PROTOBUF)],
        b"{}",
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    // MutatingAdmissionPolicy v1 is newer than the protobuf descriptors: JSON only.
    let path = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies";
    let r = common::raw(&server, "GET", path, &[("Accept", ACCEPT)], b"").await;
    assert_eq!(
        (r.status, r.header("content-type")),
        (200, Some("application/json"))
    );
    let r = common::raw(&server, "GET", path, &[("Accept", PROTOBUF)], b"").await;
    assert_eq!(r.status, 406, "{}", r.body);
    let r = common::raw(
        &server,
        "POST",
        path,
        &[("Content-Type", PROTOBUF)],
        &pb::wrap(
            "admissionregistration.k8s.io/v1",
            "MutatingAdmissionPolicy",
            &meta::Status::default(),
        ),
    )
    .await;
    assert_eq!(r.status, 415, "{}", r.body);
}
