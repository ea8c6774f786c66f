//! Deletion through the real `kube::Client`: finalizers hold an object until removed, owner
//! garbage collection (background, foreground, orphan; recursive; `blockOwnerDeletion`),
//! namespace deletion and deletecollection.

use crate::common;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

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
    assert_eq!(crate::crud::status_of(err), (422, "Invalid".into()));
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
    assert_eq!(crate::crud::status_of(err), (403, "Forbidden".into()));
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
    assert_eq!(crate::crud::status_of(err), (403, "Forbidden".into()));

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
