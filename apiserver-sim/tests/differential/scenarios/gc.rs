//! The garbage collector as kube-controller-manager runs it, on ConfigMaps owning ConfigMaps:
//! background, foreground and orphan deletion (by query and by body) and their end states; a
//! foreground deletion held by a dependent that blocks it, and one its non-blocking dependent
//! does not hold; a dependent whose only owner never existed; a dependent of two owners losing
//! one; a namespaced dependent of a cluster-scoped owner. Every wait polls to a deadline and
//! records the end state reached.

use serde_json::{Value, json};

use super::summary::deletion;
use crate::ctx::{Ctx, MERGE};

/// How long a probe waits for the garbage collector.
const WAIT: u64 = 60;

fn owner_ref(owner: &Value, kind: &str, api_version: &str, block: bool) -> Value {
    json!({"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "blockOwnerDeletion": block})
}

fn cm_ref(owner: &Value, block: bool) -> Value {
    owner_ref(owner, "ConfigMap", "v1", block)
}

async fn cm(ctx: &mut Ctx<'_>, name: &str, owners: Vec<Value>, finalizers: &[&str]) -> Value {
    let path = format!("/api/v1/namespaces/{}/configmaps", ctx.ns());
    let body = json!({"metadata": {"name": name, "ownerReferences": owners,
        "finalizers": finalizers}, "data": {"k": name}});
    ctx.setup("POST", &path, body).await.json()
}

fn cm_path(ctx: &Ctx<'_>, name: &str) -> String {
    format!("/api/v1/namespaces/{}/configmaps/{name}", ctx.ns())
}

/// Deletes `path` with `policy` in the query, recording the answer as `id`.
async fn delete(ctx: &mut Ctx<'_>, id: &str, path: &str, policy: &str) {
    let r = ctx
        .setup(
            "DELETE",
            &format!("{path}?propagationPolicy={policy}"),
            Value::Null,
        )
        .await;
    ctx.note(
        id,
        json!({"status": r.status, "object": deletion(&r.json())}),
    );
}

/// Waits for `path` to be gone and records whether it went (and the last answer's code).
async fn gone(ctx: &mut Ctx<'_>, id: &str, path: &str) {
    let (r, ok) = ctx.poll(path, WAIT, |r| r.status == 404).await;
    ctx.note(id, json!({"gone": ok, "status": r.status}));
}

/// Waits for `done` on the object at `path` and records its deletion state.
async fn until(ctx: &mut Ctx<'_>, id: &str, path: &str, done: impl Fn(&Value) -> bool) {
    let (r, ok) = ctx.poll(path, WAIT, |r| done(&r.json())).await;
    ctx.note(id, json!({"reached": ok, "object": deletion(&r.json())}));
}

async fn release(ctx: &mut Ctx<'_>, path: &str) {
    let patch = json!({"metadata": {"finalizers": null}});
    ctx.setup("PATCH", path, patch).await;
}

fn deleting_with(v: &Value, finalizers: &[&str]) -> bool {
    v["metadata"]["deletionTimestamp"].is_string()
        && v["metadata"]["finalizers"] == json!(finalizers)
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    const HOLD: &str = "example.com/hold";
    // Background: the owner goes at once, its dependent after it.
    let owner = cm(ctx, "owner-bg", vec![], &[]).await;
    cm(ctx, "dep-bg", vec![cm_ref(&owner, true)], &[]).await;
    delete(
        ctx,
        "background/delete",
        &cm_path(ctx, "owner-bg"),
        "Background",
    )
    .await;
    gone(ctx, "background/owner", &cm_path(ctx, "owner-bg")).await;
    gone(ctx, "background/dependent", &cm_path(ctx, "dep-bg")).await;
    // Foreground: the owner waits (foregroundDeletion) until its dependent is gone.
    let owner = cm(ctx, "owner-fg", vec![], &[]).await;
    cm(ctx, "dep-fg", vec![cm_ref(&owner, true)], &[]).await;
    delete(
        ctx,
        "foreground/delete",
        &cm_path(ctx, "owner-fg"),
        "Foreground",
    )
    .await;
    gone(ctx, "foreground/dependent", &cm_path(ctx, "dep-fg")).await;
    gone(ctx, "foreground/owner", &cm_path(ctx, "owner-fg")).await;
    // Foreground held: a blocking dependent with a finalizer keeps the owner.
    let owner = cm(ctx, "owner-fb", vec![], &[]).await;
    cm(ctx, "dep-fb", vec![cm_ref(&owner, true)], &[HOLD]).await;
    delete(
        ctx,
        "foreground-held/delete",
        &cm_path(ctx, "owner-fb"),
        "Foreground",
    )
    .await;
    let dep = cm_path(ctx, "dep-fb");
    until(ctx, "foreground-held/dependent", &dep, |v| {
        deleting_with(v, &[HOLD])
    })
    .await;
    let r = ctx
        .setup("GET", &cm_path(ctx, "owner-fb"), Value::Null)
        .await;
    ctx.note(
        "foreground-held/owner",
        json!({"status": r.status, "object": deletion(&r.json())}),
    );
    release(ctx, &dep).await;
    gone(ctx, "foreground-held/dependent-released", &dep).await;
    gone(
        ctx,
        "foreground-held/owner-released",
        &cm_path(ctx, "owner-fb"),
    )
    .await;
    // Foreground not held: a dependent that does not block lets the owner go first.
    let owner = cm(ctx, "owner-fn", vec![], &[]).await;
    cm(ctx, "dep-fn", vec![cm_ref(&owner, false)], &[HOLD]).await;
    delete(
        ctx,
        "foreground-unblocked/delete",
        &cm_path(ctx, "owner-fn"),
        "Foreground",
    )
    .await;
    gone(ctx, "foreground-unblocked/owner", &cm_path(ctx, "owner-fn")).await;
    let dep = cm_path(ctx, "dep-fn");
    until(ctx, "foreground-unblocked/dependent", &dep, |v| {
        deleting_with(v, &[HOLD])
    })
    .await;
    release(ctx, &dep).await;
    gone(ctx, "foreground-unblocked/dependent-released", &dep).await;
    // Orphan: the dependent stays, without its owner reference.
    let owner = cm(ctx, "owner-or", vec![], &[]).await;
    cm(ctx, "dep-or", vec![cm_ref(&owner, true)], &[]).await;
    delete(ctx, "orphan/delete", &cm_path(ctx, "owner-or"), "Orphan").await;
    gone(ctx, "orphan/owner", &cm_path(ctx, "owner-or")).await;
    let dep = cm_path(ctx, "dep-or");
    until(ctx, "orphan/dependent", &dep, |v| {
        v["metadata"]["ownerReferences"].is_null()
    })
    .await;
    // Orphan asked for in DeleteOptions.
    let owner = cm(ctx, "owner-ob", vec![], &[]).await;
    cm(ctx, "dep-ob", vec![cm_ref(&owner, false)], &[]).await;
    let opts = json!({"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Orphan"});
    let r = ctx.setup("DELETE", &cm_path(ctx, "owner-ob"), opts).await;
    ctx.note(
        "orphan-body/delete",
        json!({"status": r.status, "object": deletion(&r.json())}),
    );
    gone(ctx, "orphan-body/owner", &cm_path(ctx, "owner-ob")).await;
    let dep = cm_path(ctx, "dep-ob");
    until(ctx, "orphan-body/dependent", &dep, |v| {
        v["metadata"]["ownerReferences"].is_null()
    })
    .await;
    ctx.req(
        "bad-policy",
        "DELETE",
        &format!("{dep}?propagationPolicy=Sideways"),
        Value::Null,
    )
    .await;
    // An owner that never existed: its dependent is collected.
    let ghost = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost",
        "uid": "00000000-0000-4000-8000-00000000dead"});
    let r = ctx
        .setup(
            "POST",
            &format!("/api/v1/namespaces/{}/configmaps", ctx.ns()),
            json!({"metadata": {"name": "dep-ghost", "ownerReferences": [ghost]}}),
        )
        .await;
    ctx.note(
        "absent-owner/create",
        json!({"status": r.status, "object": deletion(&r.json())}),
    );
    gone(ctx, "absent-owner/dependent", &cm_path(ctx, "dep-ghost")).await;
    // Two owners, one deleted: the dependent stays with the other's reference.
    let a = cm(ctx, "owner-a", vec![], &[]).await;
    let b = cm(ctx, "owner-b", vec![], &[]).await;
    cm(
        ctx,
        "dep-two",
        vec![cm_ref(&a, true), cm_ref(&b, true)],
        &[],
    )
    .await;
    delete(
        ctx,
        "two-owners/delete",
        &cm_path(ctx, "owner-a"),
        "Background",
    )
    .await;
    let dep = cm_path(ctx, "dep-two");
    until(ctx, "two-owners/dependent", &dep, |v| {
        v["metadata"]["ownerReferences"]
            .as_array()
            .is_some_and(|a| a.len() == 1)
    })
    .await;
    delete(
        ctx,
        "two-owners/delete-last",
        &cm_path(ctx, "owner-b"),
        "Background",
    )
    .await;
    gone(ctx, "two-owners/dependent-gone", &dep).await;
    // A cluster-scoped owner of a namespaced dependent.
    let role = ctx.unique("gc-owner");
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    let owner = ctx
        .setup(
            "POST",
            roles,
            json!({"metadata": {"name": role}, "rules": []}),
        )
        .await
        .json();
    let r = owner_ref(&owner, "ClusterRole", "rbac.authorization.k8s.io/v1", true);
    cm(ctx, "dep-cluster", vec![r], &[]).await;
    delete(
        ctx,
        "cluster-owner/delete",
        &format!("{roles}/{role}"),
        "Background",
    )
    .await;
    gone(ctx, "cluster-owner/dependent", &cm_path(ctx, "dep-cluster")).await;
    // An owner reference added to an existing object is followed too.
    let owner = cm(ctx, "owner-late", vec![], &[]).await;
    cm(ctx, "dep-late", vec![], &[]).await;
    let patch = json!({"metadata": {"ownerReferences": [cm_ref(&owner, false)]}});
    let r = ctx
        .send(
            "PATCH",
            &cm_path(ctx, "dep-late"),
            &[("Content-Type", MERGE)],
            patch.to_string().into_bytes(),
        )
        .await;
    ctx.note(
        "late-owner/patch",
        json!({"status": r.status, "object": deletion(&r.json())}),
    );
    delete(
        ctx,
        "late-owner/delete",
        &cm_path(ctx, "owner-late"),
        "Background",
    )
    .await;
    gone(ctx, "late-owner/dependent", &cm_path(ctx, "dep-late")).await;
    ctx.setup(
        "DELETE",
        &format!("/api/v1/namespaces/{}", ctx.ns()),
        Value::Null,
    )
    .await;
}
