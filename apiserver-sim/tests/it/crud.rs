//! CRUD, optimistic concurrency, generation, status/scale subresources and patch types,
//! through the real `kube::Client` (deletion: `deletion.rs`).

use crate::common;
use crate::list_watch::CMS;

use std::fmt::Debug;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{
    ConfigMap, Event as CoreEvent, Namespace, Pod, Secret, Service, ServiceAccount,
};
use k8s_openapi::api::events::v1::Event as EventsEvent;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::NamespaceResourceScope;
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

pub(crate) fn status_of(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason),
        other => (0, other.to_string()),
    }
}

async fn crud<K>(client: Client, body: Value)
where
    K: Resource<DynamicType = (), Scope = NamespaceResourceScope>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned,
{
    let api: Api<K> = Api::namespaced(client, "default");
    let obj: K = serde_json::from_value(body).expect("valid object");
    let name = obj.name_any();
    let created = api
        .create(&PostParams::default(), &obj)
        .await
        .expect("create");
    assert!(created.meta().uid.is_some());
    assert!(created.meta().creation_timestamp.is_some());
    let rv1 = created.resource_version().expect("rv");
    let got = api.get(&name).await.expect("get");
    assert_eq!(got.resource_version(), Some(rv1.clone()));
    let listed = api.list(&ListParams::default()).await.expect("list");
    assert!(listed.items.iter().any(|o| o.name_any() == name));
    let mut changed = got.clone();
    changed
        .meta_mut()
        .labels
        .get_or_insert_default()
        .insert("changed".into(), "yes".into());
    let replaced = api
        .replace(&name, &PostParams::default(), &changed)
        .await
        .expect("replace");
    assert_ne!(replaced.resource_version(), Some(rv1));
    // The stale copy now conflicts.
    let err = api
        .replace(&name, &PostParams::default(), &changed)
        .await
        .expect_err("stale replace");
    assert_eq!(status_of(err), (409, "Conflict".into()));
    api.delete(&name, &DeleteParams::default())
        .await
        .expect("delete");
    let err = api.get(&name).await.expect_err("gone");
    assert_eq!(status_of(err), (404, "NotFound".into()));
}

#[tokio::test]
async fn crud_on_every_builtin_type() {
    let server = common::server().await;
    let c = server.client().expect("client");
    let meta = |n: &str| json!({"name": n, "namespace": "default"});
    crud::<ConfigMap>(
        c.clone(),
        json!({"metadata": meta("cm"), "data": {"a": "1"}}),
    )
    .await;
    crud::<Secret>(
        c.clone(),
        json!({"metadata": meta("s"), "stringData": {"a": "1"}}),
    )
    .await;
    crud::<Service>(
        c.clone(),
        json!({"metadata": meta("svc"), "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    crud::<ServiceAccount>(c.clone(), json!({"metadata": meta("sa")})).await;
    crud::<Pod>(
        c.clone(),
        json!({"metadata": meta("p"), "spec": {"containers": [{"name": "c", "image": "x"}]}}),
    )
    .await;
    crud::<CoreEvent>(
        c.clone(),
        json!({"metadata": meta("ev"), "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R"}),
    )
    .await;
    crud::<EventsEvent>(
        c.clone(),
        json!({"metadata": meta("ev2"), "eventTime": "2025-01-01T00:00:00.000000Z", "reason": "R",
               "reportingController": "x", "reportingInstance": "y", "action": "A", "type": "Normal"}),
    )
    .await;
    let pod_template = json!({"metadata": {"labels": {"app": "x"}},
                              "spec": {"containers": [{"name": "c", "image": "x"}]}});
    crud::<Deployment>(
        c.clone(),
        json!({"metadata": meta("d"), "spec": {"selector": {"matchLabels": {"app": "x"}},
               "template": pod_template}}),
    )
    .await;
    crud::<ReplicaSet>(
        c.clone(),
        json!({"metadata": meta("rs"), "spec": {"selector": {"matchLabels": {"app": "x"}},
               "template": pod_template}}),
    )
    .await;
    crud::<Lease>(
        c.clone(),
        json!({"metadata": meta("l"), "spec": {"holderIdentity": "me"}}),
    )
    .await;
    // Cluster-scoped namespaces.
    let nss: Api<Namespace> = Api::all(c);
    let mut ns = Namespace::default();
    ns.metadata.name = Some("extra".into());
    let created = nss
        .create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    assert_eq!(
        created.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    assert_eq!(
        created.metadata.labels.unwrap_or_default()["kubernetes.io/metadata.name"],
        "extra"
    );
}

#[tokio::test]
async fn errors_carry_kubernetes_status_reasons() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("x".into());
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let err = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect_err("dup");
    assert_eq!(status_of(err), (409, "AlreadyExists".into()));
    let err = cms.get("nope").await.expect_err("missing");
    assert_eq!(status_of(err), (404, "NotFound".into()));
    assert!(cms.get_opt("nope").await.expect("get_opt").is_none());
    cm.metadata.name = Some("Bad_Name".into());
    let err = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect_err("invalid");
    assert_eq!(status_of(err), (422, "Invalid".into()));
    // 422 Invalid names each bad field in `details.causes`.
    let json = [("Content-Type", "application/json")];
    let cms_path = "/api/v1/namespaces/default/configmaps";
    let first_cause = |r: common::Raw| {
        let s = r.json();
        assert_eq!(
            (r.status, s["reason"].as_str()),
            (422, Some("Invalid")),
            "{}",
            r.body
        );
        let c = &s["details"]["causes"][0];
        (
            c["reason"].as_str().unwrap_or("").to_string(),
            c["field"].as_str().unwrap_or("").to_string(),
        )
    };
    let bad_name = br#"{"metadata":{"name":"Bad_Name"}}"#;
    let r = common::raw(&server, "POST", cms_path, &json, bad_name).await;
    assert_eq!(
        first_cause(r),
        ("FieldValueInvalid".into(), "metadata.name".into())
    );
    let r = common::raw(&server, "POST", cms_path, &json, br#"{"metadata":{}}"#).await;
    assert_eq!(
        first_cause(r),
        ("FieldValueRequired".into(), "metadata.name".into())
    );
    let no_containers = br#"{"metadata":{"name":"p"},"spec":{}}"#;
    let r = common::raw(
        &server,
        "POST",
        "/api/v1/namespaces/default/pods",
        &json,
        no_containers,
    )
    .await;
    assert_eq!(
        first_cause(r),
        ("FieldValueRequired".into(), "spec.containers".into())
    );
    // Writes into a missing namespace.
    let other: Api<ConfigMap> = Api::namespaced(server.client().expect("client"), "missing");
    cm.metadata.name = Some("y".into());
    let err = other
        .create(&PostParams::default(), &cm)
        .await
        .expect_err("no ns");
    assert_eq!(status_of(err), (404, "NotFound".into()));
    // generateName.
    let mut gen_cm = ConfigMap::default();
    gen_cm.metadata.generate_name = Some("gen-".into());
    let made = cms
        .create(&PostParams::default(), &gen_cm)
        .await
        .expect("generateName");
    assert!(made.name_any().starts_with("gen-") && made.name_any().len() == 9);
}

fn deployment(name: &str) -> Deployment {
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "one"}]}}}
    }))
    .expect("deployment")
}

#[tokio::test]
async fn generation_status_scale_and_noop_writes() {
    let server = common::server().await;
    let deps: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    let mut d = deployment("web");
    d.status = Some(serde_json::from_value(json!({"replicas": 7})).expect("status"));
    let d = deps
        .create(&PostParams::default(), &d)
        .await
        .expect("create");
    assert_eq!(d.metadata.generation, Some(1));
    // The status sent is dropped; a new Deployment starts with an empty one, as upstream.
    assert_eq!(
        d.status.clone().unwrap_or_default(),
        Default::default(),
        "status is dropped on create"
    );
    // Metadata-only change: no generation bump.
    let d = deps
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .expect("label patch");
    assert_eq!(d.metadata.generation, Some(1));
    // Spec change: bump.
    let d = deps
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await
        .expect("spec patch");
    assert_eq!(d.metadata.generation, Some(2));
    // Status through the subresource: generation unchanged, spec untouched.
    let d = deps
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 3}, "spec": {"replicas": 9}})),
        )
        .await
        .expect("status patch");
    assert_eq!(d.metadata.generation, Some(2));
    assert_eq!(d.spec.replicas, Some(3));
    assert_eq!(d.status.as_ref().and_then(|s| s.replicas), Some(3));
    // Status on the main resource is ignored.
    let mut main = d.clone();
    main.status = Some(serde_json::from_value(json!({"replicas": 99})).expect("status"));
    let d = deps
        .replace("web", &PostParams::default(), &main)
        .await
        .expect("replace");
    assert_eq!(d.status.as_ref().and_then(|s| s.replicas), Some(3));
    // A no-op write keeps the RV.
    let rv = d.resource_version();
    let again = deps
        .replace("web", &PostParams::default(), &d)
        .await
        .expect("noop");
    assert_eq!(again.resource_version(), rv);
    // Scale subresource.
    let scale = deps.get_scale("web").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(3));
    assert_eq!(
        scale.status.and_then(|s| s.selector).as_deref(),
        Some("app=web")
    );
    deps.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .expect("patch scale");
    let d = deps.get("web").await.expect("get");
    assert_eq!(d.spec.replicas, Some(5));
    assert_eq!(d.metadata.generation, Some(3));
    // Strategic merge: containers merge by name.
    let d = deps
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "sidecar", "image": "two"}]}}}})),
        )
        .await
        .expect("strategic");
    let names: Vec<String> = d
        .spec
        .template
        .spec
        .map(|p| p.containers.into_iter().map(|c| c.name).collect())
        .unwrap_or_default();
    // A new item of a merged list comes before the server's, as upstream orders it.
    assert_eq!(names, vec!["sidecar".to_string(), "c".to_string()]);
    // ConfigMaps have no generation.
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("g".into());
    let cm = cms.create(&PostParams::default(), &cm).await.expect("cm");
    assert_eq!(cm.metadata.generation, None);
}

#[tokio::test]
async fn noop_writes_change_nothing_and_emit_no_event() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let a = crate::list_watch::make_cm(&cms, "a", &[("app", "web")]).await;
    let rv = a.resource_version().expect("rv");
    let global = server.resource_version();
    // A PUT of the stored object, a merge patch and a JSON patch that change nothing.
    let same = cms
        .replace("a", &PostParams::default(), &a)
        .await
        .expect("noop replace");
    let merged = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": "web"}}})),
        )
        .await
        .expect("noop merge");
    let ops = json!([{"op": "replace", "path": "/metadata/labels/app", "value": "web"}]);
    let jsonp = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::<()>::Json(serde_json::from_value(ops).expect("json patch")),
        )
        .await
        .expect("noop json patch");
    for o in [&same, &merged, &jsonp] {
        assert_eq!(o.resource_version().as_deref(), Some(rv.as_str()));
    }
    assert_eq!(server.resource_version(), global, "no write happened");
    // A real change afterwards is the first event a watch from `rv` sees.
    let changed = cms
        .patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": "v"}})),
        )
        .await
        .expect("real change");
    let (_, evs) =
        common::watch_events(&server, &format!("{CMS}?watch=1&resourceVersion={rv}"), 1).await;
    assert_eq!(common::types(&evs), vec!["MODIFIED"]);
    assert_eq!(
        evs[0]["object"]["metadata"]["resourceVersion"],
        changed.resource_version().expect("rv").as_str()
    );
}

/// kube-apiserver validates a `Scale` written through `/scale`: negative replicas are a 422
/// on `Scale.autoscaling`, and the object keeps its replicas.
#[tokio::test]
async fn negative_scale_is_invalid() {
    let server = common::server().await;
    let deps: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    deps.create(&PostParams::default(), &deployment("web"))
        .await
        .expect("create");
    let r = common::raw(
        &server,
        "PATCH",
        "/apis/apps/v1/namespaces/default/deployments/web/scale",
        &[("Content-Type", "application/merge-patch+json")],
        br#"{"spec":{"replicas":-1}}"#,
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        r.json()["message"],
        "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
    assert_eq!(r.json()["details"]["kind"], "Scale");
    let kept = deps.get("web").await.expect("get");
    assert_ne!(kept.spec.replicas, Some(-1));
}
