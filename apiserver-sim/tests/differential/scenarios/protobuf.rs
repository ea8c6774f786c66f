//! Protobuf (`application/vnd.kubernetes.protobuf`) for Pods and Deployments: the envelope's
//! type, objects and lists decoded with kube-rs's k8s-pb structs (independent of the
//! simulator's descriptors), and protobuf errors.

use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::core::v1 as core;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::scenarios::subresources::deployment;

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

fn unwrap(body: &[u8]) -> Option<(String, String, Vec<u8>)> {
    let u = Unknown::decode(body.strip_prefix(b"k8s\x00")?).ok()?;
    let tm = u.type_meta.unwrap_or_default();
    Some((
        tm.api_version.unwrap_or_default(),
        tm.kind.unwrap_or_default(),
        u.raw.unwrap_or_default(),
    ))
}

fn pod_summary(p: &core::Pod) -> Value {
    let meta = p.metadata.clone().unwrap_or_default();
    let spec = p.spec.clone().unwrap_or_default();
    json!({"name": meta.name, "namespace": meta.namespace, "labels": meta.labels,
        "containers": spec.containers.iter().map(|c| json!([c.name, c.image, c.image_pull_policy,
            c.termination_message_path])).collect::<Vec<_>>(),
        "restartPolicy": spec.restart_policy, "dnsPolicy": spec.dns_policy,
        "serviceAccount": spec.service_account_name, "priority": spec.priority,
        "phase": p.status.as_ref().and_then(|s| s.phase.clone()), "qos": p.status.as_ref().and_then(|s| s.qos_class.clone())})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    // No node matches the pod: on a cluster it stays Pending, as on the simulator.
    ctx.setup("POST", &pods, json!({"metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"automountServiceAccountToken": false, "nodeSelector": {"kube-rt.example.com/none": "true"},
            "containers": [{"name": "c", "image": "nginx:1.27"}]}})).await;
    let r = ctx
        .send("GET", &format!("{pods}/p"), &[("Accept", PROTOBUF)], vec![])
        .await;
    let pod = unwrap(&r.body).map(|(v, k, raw)| {
        json!({"apiVersion": v, "kind": k,
        "pod": core::Pod::decode(raw.as_slice()).ok().map(|p| pod_summary(&p))})
    });
    ctx.note(
        "pod",
        json!({"status": r.status, "type": r.content_type, "doc": pod}),
    );
    let r = ctx
        .send("GET", &pods, &[("Accept", PROTOBUF)], vec![])
        .await;
    let list = unwrap(&r.body).map(|(v, k, raw)| json!({"apiVersion": v, "kind": k,
        "items": core::PodList::decode(raw.as_slice()).ok().map(|l| l.items.iter().map(pod_summary).collect::<Vec<_>>())}));
    ctx.note(
        "pod-list",
        json!({"status": r.status, "type": r.content_type, "doc": list}),
    );
    let deps = format!("/apis/apps/v1/namespaces/{ns}/deployments");
    ctx.setup("POST", &deps, deployment("web", 3)).await;
    let r = ctx
        .send(
            "GET",
            &format!("{deps}/web"),
            &[("Accept", PROTOBUF)],
            vec![],
        )
        .await;
    let dep = unwrap(&r.body).and_then(|(v, k, raw)| apps::Deployment::decode(raw.as_slice()).ok().map(|d| {
        let spec = d.spec.unwrap_or_default();
        json!({"apiVersion": v, "kind": k, "replicas": spec.replicas, "revisionHistoryLimit": spec.revision_history_limit,
               "progressDeadlineSeconds": spec.progress_deadline_seconds,
               "strategy": spec.strategy.and_then(|s| s.r#type), "selector": spec.selector.map(|s| s.match_labels)})
    }));
    ctx.note(
        "deployment",
        json!({"status": r.status, "type": r.content_type, "doc": dep}),
    );
    let r = ctx
        .send(
            "GET",
            &format!("{deps}/missing"),
            &[("Accept", PROTOBUF)],
            vec![],
        )
        .await;
    let status = unwrap(&r.body).map(|(v, k, _)| json!([v, k]));
    ctx.note(
        "missing",
        json!({"status": r.status, "type": r.content_type, "envelope": status}),
    );
    let r = ctx
        .send(
            "GET",
            &format!("{deps}/web/scale"),
            &[("Accept", PROTOBUF)],
            vec![],
        )
        .await;
    ctx.note("scale", json!({"status": r.status, "type": r.content_type, "envelope": unwrap(&r.body).map(|(v, k, _)| json!([v, k]))}));
    let r = ctx
        .send(
            "POST",
            &deps,
            &[("Content-Type", PROTOBUF)],
            b"k8s\x00garbage".to_vec(),
        )
        .await;
    ctx.note(
        "garbage-body",
        json!({"status": r.status, "type": r.content_type}),
    );
    let r = ctx
        .send(
            "GET",
            "/api/v1/namespaces",
            &[("Accept", "application/vnd.kubernetes.protobuf;stream=watch")],
            vec![],
        )
        .await;
    ctx.note("watch-stream-type-on-get", json!({"status": r.status}));
    let r = ctx
        .send(
            "GET",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &[("Accept", PROTOBUF)],
            vec![],
        )
        .await;
    ctx.note("crd-list", json!({"status": r.status, "type": r.content_type, "envelope": unwrap(&r.body).map(|(v, k, _)| json!([v, k]))}));
}
