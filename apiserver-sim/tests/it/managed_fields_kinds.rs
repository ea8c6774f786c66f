//! `metadata.managedFields` on the kinds served in another form than stored and through
//! protobuf: an events.k8s.io write owns events.k8s.io paths under `events.k8s.io/v1`
//! while a core write owns core paths under `v1` (one stored event, read through both
//! APIs with the same entries); server-side apply through events.k8s.io and through
//! autoscaling/v1; entries going out and coming back in protobuf.
//!
//! Sources: Kubernetes docs, "Server-Side Apply" ("Field management": each entry names the
//! `apiVersion` its field set is written in); kube-apiserver's field manager, which records
//! a request's ownership in the version of the request.

use crate::apply::{APPLY_CT, entry, owned};
use crate::common;
use crate::common::pb::{self, ACCEPT, PROTOBUF};

use k8s_pb::api::apps::v1 as apps;
use serde_json::{Value, json};

const NEW_EVENTS: &str = "/apis/events.k8s.io/v1/namespaces/default/events";
const CORE_EVENTS: &str = "/api/v1/namespaces/default/events";

async fn send(
    server: &apiserver_sim::ApiServer,
    method: &str,
    path: &str,
    ct: &str,
    body: &Value,
) -> common::Raw {
    let text = body.to_string();
    common::raw(
        server,
        method,
        path,
        &[("Content-Type", ct)],
        text.as_bytes(),
    )
    .await
}

fn new_event(name: &str, note: &str) -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "eventTime": "2025-03-01T10:00:00.000000Z", "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-0", "action": "Scale", "reason": "Scaled", "type": "Normal",
        "note": note, "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"}})
}

/// Whether a `fieldsV1` set names the top-level field `f`.
fn has_field(fields: &Value, f: &str) -> bool {
    fields.get(format!("f:{f}")).is_some()
}

#[tokio::test]
async fn events_own_the_paths_of_the_api_they_are_written_through() {
    let server = common::server().await;
    let r = send(
        &server,
        "POST",
        &format!("{NEW_EVENTS}?fieldManager=recorder"),
        "application/json",
        &new_event("scaled", "scaled to 3"),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let created = r.json();
    let e = entry(&created, "recorder", "Update").expect("create entry");
    assert_eq!(e["apiVersion"], "events.k8s.io/v1");
    let fields = &e["fieldsV1"];
    assert!(
        has_field(fields, "note") && has_field(fields, "regarding"),
        "{fields}"
    );
    assert!(!has_field(fields, "message") && !has_field(fields, "involvedObject"));

    // One stored event: the core API shows the same entries.
    let core = common::raw(&server, "GET", &format!("{CORE_EVENTS}/scaled"), &[], b"").await;
    assert_eq!(core.json()["message"], "scaled to 3");
    assert_eq!(
        core.json()["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );

    // A core write owns core paths.
    let old = json!({"apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "pulled", "namespace": "default"}, "reason": "Pulled",
        "message": "image pulled", "involvedObject": {"kind": "Pod", "name": "p"}});
    let r = send(
        &server,
        "POST",
        &format!("{CORE_EVENTS}?fieldManager=kubelet"),
        "application/json",
        &old,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let e = entry(&r.json(), "kubelet", "Update").expect("core entry");
    assert_eq!(e["apiVersion"], "v1");
    assert!(has_field(&e["fieldsV1"], "message") && has_field(&e["fieldsV1"], "involvedObject"));

    // A patch through events.k8s.io takes the events.k8s.io field it changes.
    let r = send(
        &server,
        "PATCH",
        &format!("{NEW_EVENTS}/pulled?fieldManager=editor"),
        "application/merge-patch+json",
        &json!({"note": "image pulled again"}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let patched = r.json();
    assert_eq!(
        owned(&patched, "editor", "Update"),
        json!({"f:note": {}}),
        "{patched}"
    );
    assert_eq!(
        entry(&patched, "editor", "Update").expect("editor")["apiVersion"],
        "events.k8s.io/v1"
    );
    let core = common::raw(&server, "GET", &format!("{CORE_EVENTS}/pulled"), &[], b"").await;
    assert_eq!(core.json()["message"], "image pulled again");
}

#[tokio::test]
async fn server_side_apply_through_events_k8s_io() {
    let server = common::server().await;
    let apply = |manager: &str, force: bool, note: &str| {
        let path = format!(
            "{NEW_EVENTS}/applied?fieldManager={manager}{}",
            if force { "&force=true" } else { "" }
        );
        let body = new_event("applied", note);
        let server = &server;
        async move { send(server, "PATCH", &path, APPLY_CT, &body).await }
    };
    let r = apply("first", false, "one").await;
    assert_eq!(r.status, 201, "{}", r.body);
    let e = entry(&r.json(), "first", "Apply").expect("apply entry");
    assert_eq!(e["apiVersion"], "events.k8s.io/v1");
    assert!(has_field(&e["fieldsV1"], "note"), "{e}");
    let core = common::raw(&server, "GET", &format!("{CORE_EVENTS}/applied"), &[], b"").await;
    assert_eq!(core.json()["message"], "one");

    // Re-applying the same configuration changes nothing; another applier conflicts.
    let r = apply("first", false, "one").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = apply("second", false, "two").await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.body.contains(".note"), "{}", r.body);
    let r = apply("second", true, "two").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let applied = r.json();
    assert!(has_field(&owned(&applied, "second", "Apply"), "note"));
    assert!(!has_field(&owned(&applied, "first", "Apply"), "note"));
    let core = common::raw(&server, "GET", &format!("{CORE_EVENTS}/applied"), &[], b"").await;
    assert_eq!(core.json()["message"], "two");
}

#[tokio::test]
async fn autoscaling_v1_writes_own_v1_paths() {
    let server = common::server().await;
    let hpas = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
    let hpa = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 4, "targetCPUUtilizationPercentage": 70}});
    let r = send(
        &server,
        "PATCH",
        &format!("{hpas}/web?fieldManager=tuner"),
        APPLY_CT,
        &hpa,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let e = entry(&r.json(), "tuner", "Apply").expect("apply entry");
    assert_eq!(e["apiVersion"], "autoscaling/v1");
    assert!(
        e["fieldsV1"]["f:spec"]
            .get("f:targetCPUUtilizationPercentage")
            .is_some(),
        "{e}"
    );
    let mut raised = hpa.clone();
    raised["spec"]["maxReplicas"] = json!(8);
    let r = send(
        &server,
        "PATCH",
        &format!("{hpas}/web?fieldManager=tuner"),
        APPLY_CT,
        &raised,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let v2 = common::raw(
        &server,
        "GET",
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web",
        &[],
        b"",
    )
    .await
    .json();
    assert_eq!(v2["spec"]["maxReplicas"], 8);
    assert_eq!(
        v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        70
    );
    assert_eq!(
        entry(&v2, "tuner", "Apply").expect("entry")["apiVersion"],
        "autoscaling/v1"
    );
}

#[tokio::test]
async fn entries_travel_in_protobuf_and_back() {
    let server = common::server().await;
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}});
    let path = "/apis/apps/v1/namespaces/default/deployments";
    let r = send(
        &server,
        "POST",
        &format!("{path}?fieldManager=creator"),
        "application/json",
        &deploy,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let json_entries = r.json()["metadata"]["managedFields"].clone();

    let r = common::raw(
        &server,
        "GET",
        &format!("{path}/web"),
        &[("Accept", ACCEPT)],
        b"",
    )
    .await;
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let (_, _, mut got): (_, _, apps::Deployment) = pb::decode(&r.bytes);
    let md = got.metadata.as_ref().expect("metadata");
    assert_eq!(md.managed_fields.len(), 1);
    let e = &md.managed_fields[0];
    assert_eq!(e.manager.as_deref(), Some("creator"));
    let raw = e
        .fields_v1
        .as_ref()
        .and_then(|f| f.raw.clone())
        .expect("fieldsV1");
    let fields: Value = serde_json::from_slice(&raw).expect("fieldsV1 is JSON");
    assert_eq!(fields, json_entries[0]["fieldsV1"]);

    // A typed client's update sends the entries back in protobuf: they pass the typed check
    // and the update is recorded for its own manager.
    if let Some(spec) = got.spec.as_mut() {
        spec.replicas = Some(3);
    }
    let r = common::raw(
        &server,
        "PUT",
        &format!("{path}/web?fieldManager=scaler"),
        &[("Content-Type", PROTOBUF), ("Accept", ACCEPT)],
        &pb::wrap("apps/v1", "Deployment", &got),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let stored = &server.objects("apps", "deployments")[0];
    assert_eq!(stored["spec"]["replicas"], 3);
    assert_eq!(
        owned(stored, "scaler", "Update"),
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(entry(stored, "creator", "Update").is_some(), "{stored}");
}
