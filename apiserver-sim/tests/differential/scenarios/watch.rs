//! Watches: event types and order from a list's resourceVersion, label selector transitions
//! (an object leaving the selection is a DELETED), streaming lists (`sendInitialEvents`)
//! ending with the `k8s.io/initial-events-end` bookmark, 410 Gone for a compacted
//! resourceVersion (the real server must have run for 5 minutes: its first etcd compaction),
//! and invalid options. The scenario's ConfigMaps carry the label `w`, which the watches of
//! the namespace select: a cluster's controllers publish ConfigMaps of their own there.

use serde_json::{Value, json};

use crate::ctx::Ctx;
use crate::target;

/// Event type, object name and labels of each event (bookmarks: type and annotations).
fn events(list: &[Value]) -> Value {
    json!(
        list.iter()
            .map(|e| {
                let o = &e["object"];
                if e["type"] == "BOOKMARK" {
                    json!([
                        e["type"],
                        o["kind"],
                        o["apiVersion"],
                        o["metadata"]["annotations"]
                    ])
                } else if e["type"] == "ERROR" {
                    json!([e["type"], o])
                } else {
                    json!([
                        e["type"],
                        o["metadata"]["name"],
                        o["metadata"]["labels"],
                        o["data"]
                    ])
                }
            })
            .collect::<Vec<_>>()
    )
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let cms = format!("/api/v1/namespaces/{ns}/configmaps");
    ctx.setup(
        "POST",
        &cms,
        json!({"metadata": {"name": "before", "labels": {"w": "yes"}}}),
    )
    .await;
    let rv = ctx.setup("GET", &cms, Value::Null).await.json()["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    ctx.setup(
        "POST",
        &cms,
        json!({"metadata": {"name": "a", "labels": {"w": "yes"}}, "data": {"k": "1"}}),
    )
    .await;
    ctx.setup("PATCH", &format!("{cms}/a"), json!({"data": {"k": "2"}}))
        .await;
    ctx.setup(
        "PATCH",
        &format!("{cms}/a"),
        json!({"metadata": {"labels": {"w": "no"}}}),
    )
    .await;
    ctx.setup(
        "PATCH",
        &format!("{cms}/a"),
        json!({"metadata": {"labels": {"w": "yes"}}}),
    )
    .await;
    ctx.setup("DELETE", &format!("{cms}/a"), Value::Null).await;
    let client = ctx.target.client().clone();
    let (status, evs) = target::watch(
        &client,
        &format!("{cms}?watch=1&resourceVersion={rv}&labelSelector=w"),
        |e| e.len() >= 5,
    )
    .await
    .unwrap_or_default();
    ctx.note(
        "from-list-rv",
        json!({"status": status, "events": events(&evs)}),
    );
    let (status, evs) = target::watch(
        &client,
        &format!("{cms}?watch=1&resourceVersion={rv}&labelSelector=w%3Dyes"),
        |e| e.len() >= 5,
    )
    .await
    .unwrap_or_default();
    ctx.note(
        "selector-transitions",
        json!({"status": status, "events": events(&evs)}),
    );
    let (status, evs) = target::watch(
        &client,
        &format!("{cms}?watch=1&resourceVersion={rv}&fieldSelector=metadata.name%3Da"),
        |e| e.len() >= 5,
    )
    .await
    .unwrap_or_default();
    ctx.note(
        "field-selector",
        json!({"status": status, "events": events(&evs)}),
    );
    let initial_end = |e: &[Value]| e.iter().any(|e| e["type"] == "BOOKMARK");
    let (status, evs) = target::watch(&client,
        &format!("{cms}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&labelSelector=w"),
        initial_end).await.unwrap_or_default();
    ctx.note(
        "streaming-list",
        json!({"status": status, "events": events(&evs)}),
    );
    let r = ctx
        .send(
            "GET",
            &format!("{cms}?watch=1&sendInitialEvents=true&timeoutSeconds=1"),
            &[],
            Vec::new(),
        )
        .await;
    ctx.record("streaming-list-without-bookmarks", &r);
    let r = ctx.send("GET", &format!("{cms}?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=Exact&timeoutSeconds=1"), &[], Vec::new()).await;
    ctx.record("streaming-list-exact", &r);
    // A version older than every compaction: 410 Gone (a real server compacts etcd 5 minutes
    // after its start, and every 5 minutes after; before its first compaction it would
    // replay the history instead).
    let (status, evs) = target::watch(&client, &format!("{cms}?watch=1&resourceVersion=1"), |e| {
        e.len() >= 6
    })
    .await
    .unwrap_or_default();
    ctx.note(
        "from-rv-1",
        json!({"status": status, "events": events(&evs)}),
    );
    let r = ctx
        .send(
            "GET",
            &format!("{cms}?watch=1&resourceVersion=abc&timeoutSeconds=1"),
            &[],
            Vec::new(),
        )
        .await;
    ctx.record("invalid-rv", &r);
}
