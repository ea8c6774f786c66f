//! CRUD, optimistic concurrency, generation, status/scale subresources, patch types,
//! finalizers, owner GC and namespace deletion, through the real `kube::Client`.

use crate::common;

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

fn status_of(e: kube::Error) -> (u16, String) {
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
    assert!(d.status.is_none(), "status is dropped on create");
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
    assert_eq!(names, vec!["c".to_string(), "sidecar".to_string()]);
    // ConfigMaps have no generation.
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("g".into());
    let cm = cms.create(&PostParams::default(), &cm).await.expect("cm");
    assert_eq!(cm.metadata.generation, None);
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("f".into());
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    // kube-rs finalizer helper: test that finalizers is null, then add.
    cms.patch("f", &PatchParams::default(), &add_first("example.com/f"))
        .await
        .expect("add finalizer");
    let del = cms
        .delete("f", &DeleteParams::default())
        .await
        .expect("delete");
    let marked = del.left().expect("object while finalizers remain");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert!(cms.get("f").await.is_ok());
    // Adding another finalizer while deleting is refused.
    let err = cms
        .patch(
            "f",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/f", "other"]}})),
        )
        .await
        .expect_err("no new finalizers");
    assert_eq!(status_of(err), (422, "Invalid".into()));
    // Removing the last one removes the object.
    cms.patch("f", &PatchParams::default(), &remove_first("example.com/f"))
        .await
        .expect("remove finalizer");
    assert!(cms.get_opt("f").await.expect("get_opt").is_none());
}

/// JSON patches as kube-rs's finalizer helper sends them.
fn add_first(f: &str) -> Patch<()> {
    let ops = json!([
        {"op": "test", "path": "/metadata/finalizers", "value": null},
        {"op": "add", "path": "/metadata/finalizers", "value": [f]},
    ]);
    Patch::Json(serde_json::from_value(ops).expect("json patch"))
}

fn remove_first(f: &str) -> Patch<()> {
    let ops = json!([
        {"op": "test", "path": "/metadata/finalizers/0", "value": f},
        {"op": "remove", "path": "/metadata/finalizers/0"},
    ]);
    Patch::Json(serde_json::from_value(ops).expect("json patch"))
}

#[tokio::test]
async fn owner_gc_namespace_deletion_and_deletecollection() {
    let server = common::server().await;
    let client = server.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let secrets: Api<Secret> = Api::default_namespaced(client.clone());
    let mut owner = ConfigMap::default();
    owner.metadata.name = Some("owner".into());
    let owner = cms
        .create(&PostParams::default(), &owner)
        .await
        .expect("owner");
    let dependent: Secret = serde_json::from_value(json!({"metadata": {"name": "dep", "ownerReferences": [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.uid(), "controller": true}]}}))
    .expect("secret");
    secrets
        .create(&PostParams::default(), &dependent)
        .await
        .expect("dependent");
    // Owners are matched by uid: a reference naming a live object with another uid dangles.
    let mut live = ConfigMap::default();
    live.metadata.name = Some("live".into());
    let live = cms
        .create(&PostParams::default(), &live)
        .await
        .expect("live owner");
    let owned_by = |name: &str, owner: &str, uid: &str| -> Secret {
        serde_json::from_value(json!({"metadata": {"name": name, "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": uid}]}}))
        .expect("secret")
    };
    for s in [
        owned_by("kept", "live", &live.uid().expect("uid")),
        owned_by("stale-uid", "live", "00000000-0000-4000-8000-000000000000"),
    ] {
        secrets
            .create(&PostParams::default(), &s)
            .await
            .expect("dependent");
    }
    cms.delete("owner", &DeleteParams::default())
        .await
        .expect("delete owner");
    common::eventually_async("dependent collected", common::LIMIT, || {
        let s = secrets.clone();
        async move { s.get_opt("dep").await.ok().flatten().is_none() }
    })
    .await;
    server.settle().await;
    assert!(
        secrets.get_opt("stale-uid").await.expect("get").is_none(),
        "a reference whose uid no longer exists dangles"
    );
    assert!(
        secrets.get_opt("kept").await.expect("get").is_some(),
        "dependents of a live owner stay"
    );

    // Namespace deletion removes its content, then the namespace.
    let nss: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("doomed".into());
    nss.create(&PostParams::default(), &ns).await.expect("ns");
    let in_ns: Api<ConfigMap> = Api::namespaced(client.clone(), "doomed");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("inside".into());
    cm.metadata.namespace = Some("doomed".into());
    in_ns
        .create(&PostParams::default(), &cm)
        .await
        .expect("cm in ns");
    // A finalizer keeps the content, and so the namespace, around.
    in_ns
        .patch(
            "inside",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["hold"]}})),
        )
        .await
        .expect("hold");
    nss.delete("doomed", &DeleteParams::default())
        .await
        .expect("delete ns");
    server.settle().await;
    let terminating = nss.get("doomed").await.expect("still there");
    assert_eq!(
        terminating.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    // Writes to a terminating namespace don't short-circuit its finalization.
    nss.patch(
        "doomed",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
    )
    .await
    .expect("label terminating ns");
    let err = in_ns
        .create(&PostParams::default(), &cm)
        .await
        .expect_err("terminating");
    assert_eq!(status_of(err), (403, "Forbidden".into()));
    assert!(nss.get_opt("doomed").await.expect("get").is_some());
    in_ns
        .patch(
            "inside",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": null}})),
        )
        .await
        .expect("release");
    server.settle().await;
    assert!(nss.get_opt("doomed").await.expect("get ns").is_none());
    assert!(
        server
            .objects("", "configmaps")
            .iter()
            .all(|o| o["metadata"]["namespace"] != "doomed")
    );
    let err = nss
        .delete("default", &DeleteParams::default())
        .await
        .expect_err("protected");
    assert_eq!(status_of(err), (403, "Forbidden".into()));

    // deletecollection with a label selector.
    for (n, l) in [("a", "x"), ("b", "x"), ("c", "y")] {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(n.into());
        cm.metadata.labels = Some([("l".to_string(), l.to_string())].into());
        cms.create(&PostParams::default(), &cm).await.expect("cm");
    }
    cms.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("l=x"),
    )
    .await
    .expect("deletecollection");
    let left: Vec<String> = cms
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .iter()
        .map(|c| c.name_any())
        .collect();
    assert_eq!(left, vec!["c".to_string(), "live".to_string()]);
}

#[tokio::test]
async fn foreground_and_orphan_propagation() {
    let server = common::server().await;
    let client = server.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let secrets: Api<Secret> = Api::default_namespaced(client);
    for (owner, dep) in [("o1", "d1"), ("o2", "d2")] {
        let mut o = ConfigMap::default();
        o.metadata.name = Some(owner.into());
        let o = cms.create(&PostParams::default(), &o).await.expect("owner");
        let d: Secret =
            serde_json::from_value(json!({"metadata": {"name": dep, "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": owner, "uid": o.uid()}]}}))
            .expect("secret");
        secrets
            .create(&PostParams::default(), &d)
            .await
            .expect("dep");
    }
    cms.delete("o1", &DeleteParams::foreground())
        .await
        .expect("fg");
    cms.delete("o2", &DeleteParams::orphan())
        .await
        .expect("orphan");
    server.settle().await;
    assert!(cms.get_opt("o1").await.expect("o1").is_none());
    assert!(secrets.get_opt("d1").await.expect("d1").is_none());
    assert!(cms.get_opt("o2").await.expect("o2").is_none());
    let d2 = secrets.get("d2").await.expect("orphan survives");
    assert!(d2.metadata.owner_references.unwrap_or_default().is_empty());
}

/// Foreground deletion is recursive, and an owner waits only for the dependents that reference
/// it with `blockOwnerDeletion: true`. Chain: ConfigMap `top` ← Secret `mid` ← ConfigMap `leaf`
/// (both blocking, `leaf` held by a finalizer), plus a non-blocking Secret `loose` (held too).
#[tokio::test]
async fn foreground_deletion_is_recursive_and_waits_only_for_blocking_dependents() {
    const HOLD: &str = "example.com/hold";
    let server = common::server().await;
    let client = server.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let secrets: Api<Secret> = Api::default_namespaced(client);
    let owner_ref = |kind: &str, name: &str, uid: String, block: bool| {
        json!({"apiVersion": "v1", "kind": kind, "name": name, "uid": uid,
               "blockOwnerDeletion": block})
    };
    let top = cms
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "top"}})).unwrap(),
        )
        .await
        .expect("top");
    let mid: Secret = serde_json::from_value(json!({"metadata": {"name": "mid",
        "ownerReferences": [owner_ref("ConfigMap", "top", top.uid().unwrap(), true)]}}))
    .unwrap();
    let mid = secrets
        .create(&PostParams::default(), &mid)
        .await
        .expect("mid");
    let leaf: ConfigMap = serde_json::from_value(json!({"metadata": {"name": "leaf",
        "finalizers": [HOLD],
        "ownerReferences": [owner_ref("Secret", "mid", mid.uid().unwrap(), true)]}}))
    .unwrap();
    cms.create(&PostParams::default(), &leaf)
        .await
        .expect("leaf");
    let loose: Secret = serde_json::from_value(json!({"metadata": {"name": "loose",
        "finalizers": [HOLD],
        "ownerReferences": [owner_ref("ConfigMap", "top", top.uid().unwrap(), false)]}}))
    .unwrap();
    secrets
        .create(&PostParams::default(), &loose)
        .await
        .expect("loose");

    cms.delete("top", &DeleteParams::foreground())
        .await
        .expect("delete top");
    server.settle().await;
    // Every level is being deleted; `top` and `mid` wait for their blocking dependent.
    let deleting_with = |meta: &kube::core::ObjectMeta| {
        assert!(
            meta.deletion_timestamp.is_some(),
            "{:?} is deleting",
            meta.name
        );
        meta.finalizers.clone().unwrap_or_default()
    };
    let top = cms.get("top").await.expect("top waits");
    assert_eq!(deleting_with(&top.metadata), ["foregroundDeletion"]);
    let mid = secrets.get("mid").await.expect("mid waits");
    assert_eq!(deleting_with(&mid.metadata), ["foregroundDeletion"]);
    let leaf = cms.get("leaf").await.expect("leaf is held");
    assert_eq!(deleting_with(&leaf.metadata), [HOLD]);
    let loose = secrets.get("loose").await.expect("loose is held");
    assert_eq!(deleting_with(&loose.metadata), [HOLD]);

    // Releasing the leaf lets the chain go; the non-blocking dependent does not hold `top`.
    let release = Patch::Merge(json!({"metadata": {"finalizers": null}}));
    cms.patch("leaf", &PatchParams::default(), &release)
        .await
        .expect("release leaf");
    server.settle().await;
    for name in ["leaf", "top"] {
        assert!(
            cms.get_opt(name).await.expect("get").is_none(),
            "{name} is gone"
        );
    }
    assert!(
        secrets.get_opt("mid").await.expect("get").is_none(),
        "mid is gone"
    );
    assert!(
        secrets.get_opt("loose").await.expect("get").is_some(),
        "loose is still held"
    );
    secrets
        .patch("loose", &PatchParams::default(), &release)
        .await
        .expect("release loose");
    server.settle().await;
    assert!(secrets.get_opt("loose").await.expect("get").is_none());
}
