//! Lists (selectors, pagination, resourceVersion semantics) and watches (every rule of
//! the wire spec, bookmarks, selector transitions).

use crate::common;

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};

use apiserver_sim::ApiServer;
use serde_json::json;

pub(crate) async fn make_cm(
    api: &Api<ConfigMap>,
    name: &str,
    labels: &[(&str, &str)],
) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.into());
    cm.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    api.create(&PostParams::default(), &cm)
        .await
        .expect("create")
}

fn code(e: kube::Error) -> (u16, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason),
        other => (0, other.to_string()),
    }
}

#[tokio::test]
async fn pagination_with_page_size_two_over_eleven_objects() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    for i in 0..11 {
        make_cm(&cms, &format!("cm-{i:02}"), &[]).await;
    }
    let mut names = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    let mut rvs = Vec::new();
    loop {
        let mut lp = ListParams::default().limit(2);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = cms.list(&lp).await.expect("page");
        pages += 1;
        assert!(page.items.len() <= 2);
        rvs.push(page.metadata.resource_version.clone());
        names.extend(page.items.iter().map(|c| c.name_any()));
        if page.metadata.continue_.as_deref().unwrap_or("").is_empty() {
            assert_eq!(page.metadata.remaining_item_count, None);
            break;
        }
        assert_eq!(
            page.metadata.remaining_item_count,
            Some(11 - names.len() as i64)
        );
        token = page.metadata.continue_;
        // Writes between pages don't leak into the snapshot.
        make_cm(&cms, &format!("zz-late-{pages}"), &[]).await;
    }
    assert_eq!(pages, 6);
    let want: Vec<String> = (0..11).map(|i| format!("cm-{i:02}")).collect();
    assert_eq!(names, want);
    assert!(
        rvs.windows(2).all(|w| w[0] == w[1]),
        "all pages share the snapshot RV"
    );

    // A token from before a compaction is expired.
    let first = cms
        .list(&ListParams::default().limit(2))
        .await
        .expect("page");
    make_cm(&cms, "after", &[]).await;
    server.compact();
    let t = first.metadata.continue_.expect("token");
    let err = cms
        .list(&ListParams::default().limit(2).continue_token(&t))
        .await
        .expect_err("expired");
    assert_eq!(code(err), (410, "Expired".into()));
    // The 410 offers a token that continues (inconsistently) from the latest state.
    let r = common::raw(
        &server,
        "GET",
        &format!("{CMS}?limit=100&continue={t}"),
        &[],
        b"",
    )
    .await;
    let fresh = r.json()["metadata"]["continue"]
        .as_str()
        .expect("fresh token")
        .to_string();
    let rest = cms
        .list(&ListParams::default().continue_token(&fresh))
        .await
        .expect("continue from latest");
    assert!(rest.items.iter().any(|c| c.name_any() == "cm-02"));
    assert!(
        !rest
            .items
            .iter()
            .any(|c| c.name_any() == "cm-00" || c.name_any() == "cm-01")
    );
    // A garbage token is a bad request.
    let err = cms
        .list(&ListParams::default().continue_token("garbage"))
        .await
        .expect_err("bad");
    assert_eq!(code(err).0, 400);
}

#[tokio::test]
async fn selectors_and_resource_version_semantics() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    make_cm(&cms, "a", &[("app", "web"), ("tier", "fe")]).await;
    make_cm(&cms, "b", &[("app", "db")]).await;
    let c = make_cm(&cms, "c", &[]).await;
    let names = |l: kube::core::ObjectList<ConfigMap>| {
        l.items.iter().map(|c| c.name_any()).collect::<Vec<_>>()
    };
    let l = cms
        .list(&ListParams::default().labels("app in (web,db)"))
        .await
        .expect("in");
    assert_eq!(names(l), vec!["a", "b"]);
    let l = cms
        .list(&ListParams::default().labels("app!=web"))
        .await
        .expect("neq");
    assert_eq!(names(l), vec!["b", "c"]);
    let l = cms
        .list(&ListParams::default().labels("!app"))
        .await
        .expect("absent");
    assert_eq!(names(l), vec!["c"]);
    let l = cms
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .expect("field");
    assert_eq!(names(l), vec!["b"]);
    let l = cms
        .list(&ListParams::default().fields("metadata.namespace=default,metadata.name!=b"))
        .await
        .expect("fields");
    assert_eq!(names(l), vec!["a", "c"]);
    let err = cms
        .list(&ListParams::default().fields("spec.x=1"))
        .await
        .expect_err("field");
    assert_eq!(code(err), (400, "BadRequest".into()));
    // Across namespaces.
    let all: Api<ConfigMap> = Api::all(server.client().expect("client"));
    assert_eq!(
        all.list(&ListParams::default())
            .await
            .expect("all")
            .items
            .len(),
        3
    );

    // Exact read of an older snapshot.
    let rv_before = c.resource_version().expect("rv");
    cms.patch(
        "c",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .expect("patch");
    cms.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    let path = format!(
        "/api/v1/namespaces/default/configmaps?resourceVersion={rv_before}&resourceVersionMatch=Exact"
    );
    let r = common::raw(&server, "GET", &path, &[], b"").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let doc = r.json();
    assert_eq!(doc["metadata"]["resourceVersion"], rv_before.as_str());
    let items = doc["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 3, "a still present at the old RV");
    assert!(
        items[2].get("data").is_none(),
        "c without data at the old RV"
    );
    // RV with a limit and no resourceVersionMatch: the legacy exact read, page by page.
    let path = format!("{CMS}?resourceVersion={rv_before}&limit=2");
    let page = common::raw(&server, "GET", &path, &[], b"").await.json();
    assert_eq!(page["metadata"]["resourceVersion"], rv_before.as_str());
    let names_of = |doc: &serde_json::Value| -> Vec<String> {
        doc["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(
        names_of(&page),
        vec!["a", "b"],
        "a still present at the old RV"
    );
    let token = page["metadata"]["continue"].as_str().expect("more pages");
    let rest = common::raw(
        &server,
        "GET",
        &format!("{CMS}?limit=2&continue={token}"),
        &[],
        b"",
    )
    .await
    .json();
    assert_eq!(names_of(&rest), vec!["c"]);
    assert!(
        rest["items"][0].get("data").is_none(),
        "c as it was at the old RV"
    );
    // NotOlderThan gives the latest state.
    let path = format!(
        "/api/v1/namespaces/default/configmaps?resourceVersion={rv_before}&resourceVersionMatch=NotOlderThan"
    );
    assert_eq!(
        common::raw(&server, "GET", &path, &[], b"").await.json()["items"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
    // Future RV → 504 with ResourceVersionTooLarge.
    let future = server.resource_version() + 100;
    let r = common::raw(
        &server,
        "GET",
        &format!("/api/v1/namespaces/default/configmaps?resourceVersion={future}"),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 504);
    assert_eq!(
        r.json()["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    // After compaction the old exact RV is gone.
    server.compact();
    let path = format!(
        "/api/v1/namespaces/default/configmaps?resourceVersion={rv_before}&resourceVersionMatch=Exact"
    );
    let r = common::raw(&server, "GET", &path, &[], b"").await;
    assert_eq!(
        (r.status, r.json()["reason"].as_str()),
        (410, Some("Expired"))
    );
}

pub(crate) const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn watch_rules() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let a = make_cm(&cms, "a", &[("app", "web")]).await;
    let rv_a = a.resource_version().expect("rv");
    make_cm(&cms, "b", &[]).await;

    // From an RV inside the window: only later events.
    let (status, evs) =
        common::watch_events(&server, &format!("{CMS}?watch=1&resourceVersion={rv_a}"), 1).await;
    assert_eq!(status, 200);
    assert_eq!(common::types(&evs), vec!["ADDED"]);
    assert_eq!(evs[0]["object"]["metadata"]["name"], "b");

    // RV 0 and RV unset: synthetic ADDED for everything, first.
    for query in ["watch=true&resourceVersion=0", "watch=true"] {
        let (_, evs) = common::watch_events(&server, &format!("{CMS}?{query}"), 2).await;
        assert_eq!(common::types(&evs), vec!["ADDED", "ADDED"], "{query}");
        let names: Vec<&str> = evs
            .iter()
            .filter_map(|e| e["object"]["metadata"]["name"].as_str())
            .collect();
        assert_eq!(names, vec!["a", "b"], "{query}");
    }

    // Streaming list: initial ADDED then the annotated bookmark.
    let (_, evs) = common::watch_events(
        &server,
        &format!("{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=&allowWatchBookmarks=true"),
        3,
    )
    .await;
    assert_eq!(common::types(&evs), vec!["ADDED", "ADDED", "BOOKMARK"]);
    assert_eq!(
        evs[2]["object"]["metadata"]["annotations"][apiserver_sim::INITIAL_EVENTS_END],
        "true"
    );
    assert_eq!(evs[2]["object"]["kind"], "ConfigMap");
    assert_eq!(evs[2]["object"]["apiVersion"], "v1");

    // Too old: HTTP 200, one ERROR (410 Expired), end of stream.
    server.compact();
    let (status, evs) =
        common::watch_until_closed(&server, &format!("{CMS}?watch=1&resourceVersion={rv_a}"))
            .await
            .expect("the server ends the stream after the ERROR");
    assert_eq!(status, 200);
    assert_eq!(common::types(&evs), vec!["ERROR"]);
    assert_eq!(evs[0]["object"]["code"], 410);
    assert_eq!(evs[0]["object"]["reason"], "Expired");

    // A streaming list from a future RV: in-band 504 (ResourceVersionTooLarge).
    let future = server.resource_version() + 10;
    let (status, evs) = common::watch_until_closed(
        &server,
        &format!("{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion={future}"),
    )
    .await
    .expect("the server ends the stream after the ERROR");
    assert_eq!(
        (status, common::types(&evs)),
        (200, vec!["ERROR".to_string()])
    );
    assert_eq!(evs[0]["object"]["code"], 504);

    // Invalid watch options are rejected before the stream starts.
    let r = common::raw(
        &server,
        "GET",
        &format!("{CMS}?watch=1&sendInitialEvents=true"),
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 422);
}

/// kube-rs asks for `timeoutSeconds=290`: the server sends a bookmark, then ends the stream
/// cleanly at the deadline (paused time: the 290 s pass at once).
#[tokio::test(start_paused = true)]
async fn bookmark_then_clean_end_on_timeout_seconds() {
    let server = ApiServer::start().await.expect("server");
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let a = make_cm(&cms, "a", &[]).await;
    let rv = a.resource_version().expect("rv");
    let path =
        format!("{CMS}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true&timeoutSeconds=290");
    let mut s = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    tokio::io::AsyncWriteExt::write_all(&mut s, req.as_bytes())
        .await
        .expect("write");
    let started = tokio::time::Instant::now();
    let mut buf = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut s, &mut buf)
        .await
        .expect("read");
    assert!(
        started.elapsed() >= Duration::from_secs(290),
        "the stream stays open until timeoutSeconds"
    );
    let text = String::from_utf8_lossy(&buf);
    assert!(
        text.ends_with("0\r\n\r\n"),
        "clean end with the final chunk: {text}"
    );
    let bookmark = text
        .lines()
        .find(|l| l.contains("\"BOOKMARK\""))
        .expect("a bookmark before the end");
    let ev: serde_json::Value = serde_json::from_str(bookmark).expect("JSON");
    assert_eq!(
        ev["object"]["metadata"]["resourceVersion"],
        server.resource_version().to_string()
    );
    assert_eq!(ev["object"]["kind"], "ConfigMap");
}

#[tokio::test]
async fn watch_selector_transitions_and_periodic_bookmarks() {
    let server = common::server().await;
    let client = server.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let a = make_cm(&cms, "a", &[("app", "web")]).await;
    let rv = a.resource_version().expect("rv");
    let path = format!(
        "{CMS}?watch=1&resourceVersion={rv}&labelSelector=app%3Dweb&allowWatchBookmarks=true"
    );
    let watcher = {
        let server_url = path.clone();
        let srv = &server;
        async move { common::watch_events(srv, &server_url, 4).await }
    };
    let writer = async {
        // Leave the selector, come back, change inside, and move the RV elsewhere for a bookmark.
        cms.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": "db"}}})),
        )
        .await
        .expect("leave");
        cms.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"app": "web"}}})),
        )
        .await
        .expect("enter");
        cms.patch(
            "a",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"x": "1"}})),
        )
        .await
        .expect("modify");
        let secrets: Api<Secret> = Api::default_namespaced(client.clone());
        let mut s = Secret::default();
        s.metadata.name = Some("moves-rv".into());
        secrets
            .create(&PostParams::default(), &s)
            .await
            .expect("secret");
    };
    let ((_, evs), ()) = tokio::join!(watcher, writer);
    assert_eq!(
        common::types(&evs),
        vec!["DELETED", "ADDED", "MODIFIED", "BOOKMARK"]
    );
    let del = &evs[0]["object"];
    assert_eq!(
        del["metadata"]["labels"]["app"], "web",
        "DELETED carries the old content"
    );
    assert_ne!(del["metadata"]["resourceVersion"], rv.as_str());
}
