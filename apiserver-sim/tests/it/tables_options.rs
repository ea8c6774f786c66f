//! How a `Table` is asked for and what it carries (k8s.io/apiserver
//! `endpoints/handlers/response.go` `asTable`, `negotiation`): the `Accept` negotiation
//! (fallback to JSON, 406 for an unsupported conversion), `includeObject`, the list and
//! object `resourceVersion`, pagination with `continue`, and tables on watches (columns in
//! the first event only, one row per event).

use crate::common;
use crate::tables::{TABLE_ACCEPT, cells, columns, table};

use std::time::Duration;

use apiserver_sim::ApiServer;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
        "data": {"k": "v"}})
}

async fn get(server: &ApiServer, path: &str, accept: &str) -> common::Raw {
    common::raw(server, "GET", path, &[("Accept", accept)], b"").await
}

/// negotiation.go: kubectl's `as=Table` clauses give a `meta.k8s.io/v1` Table answered as
/// `application/json`; `v1beta1` alone gives a v1beta1 Table; an unknown `as=` or group is
/// skipped for a later `application/json`, and refused with 406 when it is the only clause.
#[tokio::test]
async fn accept_negotiation() {
    let server = common::server().await;
    server.create_json(cm("a")).expect("cm");
    let r = get(&server, CMS, TABLE_ACCEPT).await;
    assert_eq!(
        (r.status, r.header("Content-Type")),
        (200, Some("application/json"))
    );
    assert_eq!(r.json()["apiVersion"], "meta.k8s.io/v1");
    let r = get(
        &server,
        CMS,
        "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
    )
    .await;
    assert_eq!(
        (r.json()["kind"].as_str(), r.json()["apiVersion"].as_str()),
        (Some("Table"), Some("meta.k8s.io/v1beta1"))
    );
    assert_eq!(
        r.json()["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    let r = get(
        &server,
        CMS,
        "application/json;as=Foo;v=v1;g=meta.k8s.io,application/json",
    )
    .await;
    assert_eq!(
        (r.status, r.json()["kind"].as_str()),
        (200, Some("ConfigMapList"))
    );
    for only in [
        "application/json;as=Foo;v=v1;g=meta.k8s.io",
        "application/json;as=Table;v=v2;g=meta.k8s.io",
        "application/json;as=Table;v=v1;g=apps",
    ] {
        let r = get(&server, CMS, only).await;
        assert_eq!(r.status, 406, "{only}: {}", r.body);
        let s = r.json();
        assert_eq!(s["reason"], "NotAcceptable");
        assert_eq!(
            s["message"],
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }
    // Negotiation comes before the object is looked up.
    let r = get(
        &server,
        &format!("{CMS}/missing"),
        "application/json;as=Foo;v=v1;g=meta.k8s.io",
    )
    .await;
    assert_eq!(r.status, 406);
}

/// response.go `asTable`: `includeObject=Metadata` (default) puts a `PartialObjectMetadata`
/// in each row, `Object` the full object in the requested version, `None` null; any other
/// value is a 400.
#[tokio::test]
async fn include_object() {
    let server = common::server().await;
    server.create_json(cm("a")).expect("cm");
    let t = table(&server, CMS).await;
    let obj = &t["rows"][0]["object"];
    assert_eq!(
        (obj["kind"].as_str(), obj["apiVersion"].as_str()),
        (Some("PartialObjectMetadata"), Some("meta.k8s.io/v1"))
    );
    assert_eq!(obj["metadata"]["name"], "a");
    assert!(obj.get("data").is_none());
    assert_eq!(
        table(&server, &format!("{CMS}?includeObject=Metadata")).await["rows"][0]["object"],
        *obj
    );
    let full = &table(&server, &format!("{CMS}?includeObject=Object")).await["rows"][0]["object"];
    assert_eq!(
        (full["kind"].as_str(), full["data"]["k"].as_str()),
        (Some("ConfigMap"), Some("v"))
    );
    assert!(
        table(&server, &format!("{CMS}?includeObject=None")).await["rows"][0]["object"].is_null()
    );
    let r = get(&server, &format!("{CMS}?includeObject=All"), TABLE_ACCEPT).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["message"],
        "Unable to convert to Table as requested: includeObject: Unsupported value: \"All\": supported values: \"Metadata\", \"None\", \"Object\""
    );
}

/// table.go: a list's table carries the list's `resourceVersion`, `continue` and
/// `remainingItemCount`; a single object's table its `resourceVersion` and one row.
#[tokio::test]
async fn resource_versions_and_pagination() {
    let server = common::server().await;
    for n in ["a", "b", "c"] {
        server.create_json(cm(n)).expect("cm");
    }
    let t = table(&server, &format!("{CMS}?limit=2")).await;
    assert_eq!(t["rows"].as_array().map(Vec::len), Some(2));
    assert_eq!(t["metadata"]["remainingItemCount"], 1);
    let token = t["metadata"]["continue"]
        .as_str()
        .expect("continue token")
        .to_string();
    let rv = t["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .to_string();
    assert_eq!(rv, server.resource_version().to_string());
    let t = table(&server, &format!("{CMS}?limit=2&continue={token}")).await;
    assert_eq!(t["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(cells(&t, "c")[0], "c");
    assert!(t["metadata"].get("continue").is_none());
    let one = table(&server, &format!("{CMS}/b")).await;
    let stored = server
        .objects("", "configmaps")
        .into_iter()
        .find(|o| o["metadata"]["name"] == "b")
        .expect("b");
    assert_eq!(
        one["metadata"],
        json!({"resourceVersion": stored["metadata"]["resourceVersion"]})
    );
    assert_eq!(columns(&one), ["Name", "Data", "Age"]);
    assert_eq!(one["rows"].as_array().map(Vec::len), Some(1));
    // Writes answer a table too when asked for one.
    let r = common::raw(
        &server,
        "POST",
        CMS,
        &[
            ("Accept", TABLE_ACCEPT),
            ("Content-Type", "application/json"),
        ],
        cm("d").to_string().as_bytes(),
    )
    .await;
    assert_eq!((r.status, r.json()["kind"].as_str()), (201, Some("Table")));
}

/// Opens a watch asking for tables and reads `n` events (or until 10 s pass).
async fn watch_tables(server: &ApiServer, path: &str, n: usize) -> Vec<Value> {
    let mut s = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: {TABLE_ACCEPT}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut chunk = [0u8; 8192];
        match tokio::time::timeout_at(deadline, s.read(&mut chunk)).await {
            Ok(Ok(k)) if k > 0 => buf.extend_from_slice(&chunk[..k]),
            _ => break,
        }
        let Some(split) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let body = common::dechunk(&buf[split + 4..]);
        let events: Vec<Value> = String::from_utf8_lossy(&body)
            .lines()
            .map(|l| serde_json::from_str(l).expect("each watch line is JSON"))
            .collect();
        if events.len() >= n {
            return events;
        }
    }
    panic!("fewer than {n} events: {}", String::from_utf8_lossy(&buf));
}

/// watch.go `watchEmbeddedEncoder`: on a watch asking for tables every event's object is a
/// Table with one row; only the first carries the column definitions.
#[tokio::test]
async fn watch_events_are_tables() {
    let server = common::server().await;
    let rv = server.resource_version();
    server.create_json(cm("a")).expect("cm");
    server.create_json(cm("b")).expect("cm");
    let mut a = cm("a");
    a["data"] = json!({"k": "v", "k2": "v2"});
    server.replace_json(a).expect("replace");
    let events = watch_tables(
        &server,
        &format!("{CMS}?watch=true&resourceVersion={rv}"),
        3,
    )
    .await;
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(types, ["ADDED", "ADDED", "MODIFIED"]);
    for (i, e) in events.iter().enumerate() {
        let t = &e["object"];
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["rows"].as_array().map(Vec::len), Some(1));
        if i == 0 {
            assert_eq!(columns(t), ["Name", "Data", "Age"]);
        } else {
            assert!(t["columnDefinitions"].is_null(), "{t}");
        }
    }
    assert_eq!(
        cells(&events[2]["object"], "a")[..2],
        [json!("a"), json!(2)]
    );
    assert_eq!(
        events[2]["object"]["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );
    // Initial events of a watch without a resourceVersion are tables as well.
    let events = watch_tables(&server, &format!("{CMS}?watch=true&includeObject=None"), 2).await;
    assert_eq!(columns(&events[0]["object"]), ["Name", "Data", "Age"]);
    assert!(events[1]["object"]["columnDefinitions"].is_null());
    assert!(events[0]["object"]["rows"][0]["object"].is_null());
}
