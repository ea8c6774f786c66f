//! Fault injection through the library API and over HTTP under `/__sim`.

use crate::common;

use apiserver_sim::{ApiServer, FailRule};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn fail_next_requests_by_verb_and_resource() {
    let server = ApiServer::start().await.expect("server");
    server.fail_next(FailRule::new("list", "configmaps", 500, 2));
    server.fail_next(FailRule::new("create", "configmaps", 403, 1));
    // Gets are unaffected.
    assert_eq!(
        common::raw(&server, "GET", &format!("{CMS}/x"), &[], b"")
            .await
            .status,
        404
    );
    for _ in 0..2 {
        let r = common::raw(&server, "GET", CMS, &[], b"").await;
        assert_eq!(
            (r.status, r.json()["reason"].as_str().map(str::to_string)),
            (500, Some("InternalError".into()))
        );
    }
    assert_eq!(common::raw(&server, "GET", CMS, &[], b"").await.status, 200);
    let body = br#"{"metadata":{"name":"a"}}"#;
    let json = [("Content-Type", "application/json")];
    assert_eq!(
        common::raw(&server, "POST", CMS, &json, body).await.status,
        403
    );
    assert_eq!(
        common::raw(&server, "POST", CMS, &json, body).await.status,
        201
    );
    // 429 with Retry-After: kube's client sees the error (it has no retry layer by default).
    server.fail_next(FailRule::new("list", "configmaps", 429, 1).retry_after(2));
    let r = common::raw(&server, "GET", CMS, &[], b"").await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("Retry-After"), Some("2"));
    assert_eq!(r.json()["details"]["retryAfterSeconds"], 2);
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    assert_eq!(
        cms.list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len(),
        1
    );
    server.fail_next(FailRule::new("*", "*", 500, 5));
    server.clear_faults();
    assert!(cms.list(&ListParams::default()).await.is_ok());
}

#[tokio::test]
async fn http_fault_controls() {
    let server = ApiServer::start().await.expect("server");
    let json = [("Content-Type", "application/json")];
    let rule =
        br#"{"verb":"get","resource":"configmaps","code":429,"count":1,"retryAfterSeconds":3}"#;
    assert_eq!(
        common::raw(&server, "POST", "/__sim/faults", &json, rule)
            .await
            .status,
        201
    );
    let listed = common::raw(&server, "GET", "/__sim/faults", &[], b"")
        .await
        .json();
    assert_eq!(listed[0]["code"], 429);
    let r = common::raw(&server, "GET", &format!("{CMS}/x"), &[], b"").await;
    assert_eq!((r.status, r.header("Retry-After")), (429, Some("3")));
    assert_eq!(
        common::raw(&server, "POST", "/__sim/faults", &json, b"{bad")
            .await
            .status,
        400
    );
    assert_eq!(
        common::raw(&server, "DELETE", "/__sim/faults", &[], b"")
            .await
            .status,
        200
    );

    // Seed through the API, then read state and RV over HTTP.
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("a".into());
    let cm = cms
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    let rv = common::raw(&server, "GET", "/__sim/resourceversion", &[], b"")
        .await
        .json();
    assert_eq!(rv["resourceVersion"], server.resource_version().to_string());
    let objs = common::raw(&server, "GET", "/__sim/objects/core/configmaps", &[], b"")
        .await
        .json();
    assert_eq!(objs["items"][0]["metadata"]["name"], "a");

    // Compaction over HTTP makes an old watch RV expire.
    let old = cm.metadata.resource_version.expect("rv");
    let mut cm2 = ConfigMap::default();
    cm2.metadata.name = Some("b".into());
    cms.create(&PostParams::default(), &cm2)
        .await
        .expect("create b");
    assert_eq!(
        common::raw(&server, "POST", "/__sim/compact", &[], b"")
            .await
            .status,
        200
    );
    let (_, evs) =
        common::watch_events(&server, &format!("{CMS}?watch=1&resourceVersion={old}"), 1).await;
    assert_eq!(evs[0]["object"]["code"], 410);

    // Dropping watches ends open streams (cleanly).
    let rv = server.resource_version();
    let path = format!("{CMS}?watch=1&resourceVersion={rv}");
    let watch = common::watch_events(&server, &path, 1);
    let dropper = async {
        // Keep dropping until the watch above has started and ended.
        for _ in 0..500 {
            let _ = common::raw(&server, "POST", "/__sim/watches/drop", &[], b"").await;
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    let (status, evs) = tokio::select! {
        r = watch => r,
        _ = dropper => (0, vec![]),
    };
    assert_eq!((status, evs.len()), (200, 0), "stream ended without events");
}

#[tokio::test]
async fn seed_helpers_typed_and_json() {
    let server = ApiServer::start().await.expect("server");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("seeded".into());
    let stored = server.create(&cm).expect("typed seed");
    assert!(stored.metadata.uid.is_some());
    let v = server
        .create_json(
            serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}),
        )
        .expect("json seed");
    let invalid = server.create_json(
        serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "bad"}, "spec": {"selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "y"}}}}}),
    );
    let err = invalid
        .map_err(|e| e.to_string())
        .expect_err("invalid deployment");
    assert!(
        err.contains("does not match template") && err.contains("spec.template.spec.containers"),
        "{err}"
    );
    assert_eq!(v["metadata"]["generation"], 1);
    assert_eq!(server.list::<ConfigMap>().len(), 1);
    assert!(
        server
            .create_json(serde_json::json!({"apiVersion": "v9", "kind": "Nope"}))
            .is_err()
    );
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    assert!(cms.get("seeded").await.is_ok());
    let kc = server.kubeconfig().expect("kubeconfig");
    assert_eq!(
        kc.clusters[0]
            .cluster
            .as_ref()
            .and_then(|c| c.server.clone()),
        Some(server.url())
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kubeconfig");
    server.write_kubeconfig(&path).expect("write");
    let cfg = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&path).expect("read"),
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("kube accepts it");
    let client = kube::Client::try_from(cfg).expect("client");
    let via_file: Api<ConfigMap> = Api::default_namespaced(client);
    assert!(via_file.get("seeded").await.is_ok());
}

#[tokio::test]
async fn unready_and_bookmark_now() {
    let server = ApiServer::start().await.expect("server");
    server.set_ready(false);
    assert_eq!(
        common::raw(&server, "GET", "/readyz", &[], b"")
            .await
            .status,
        500
    );
    assert_eq!(
        common::raw(&server, "GET", "/livez", &[], b"").await.status,
        200
    );
    let r = common::raw(&server, "GET", CMS, &[], b"").await;
    assert_eq!((r.status, r.header("Retry-After")), (429, Some("1")));
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap_or("")
            .starts_with("storage is (re)initializing")
    );
    assert_eq!(
        common::raw(&server, "POST", "/__sim/ready", &[], b"")
            .await
            .status,
        200
    );
    assert_eq!(common::raw(&server, "GET", CMS, &[], b"").await.status, 200);
    assert_eq!(
        common::raw(&server, "GET", "/readyz", &[], b"")
            .await
            .status,
        200
    );

    // A bookmark on demand (the periodic interval is a minute here).
    let rv = server.resource_version();
    let path = format!("{CMS}?watch=1&resourceVersion={rv}&allowWatchBookmarks=true");
    let watch = common::watch_events(&server, &path, 1);
    let poke = async {
        for _ in 0..500 {
            server.send_bookmarks();
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    };
    let (_, evs) = tokio::select! {
        r = watch => r,
        _ = poke => (0, vec![]),
    };
    assert_eq!(common::types(&evs), vec!["BOOKMARK"]);
    assert_eq!(
        evs[0]["object"]["metadata"]["resourceVersion"],
        rv.to_string()
    );
}

#[tokio::test]
async fn disconnected_watchers_are_dropped() {
    use tokio::io::AsyncWriteExt;
    let server = ApiServer::start().await.expect("server");
    let mut conns = Vec::new();
    for _ in 0..3 {
        let mut s = tokio::net::TcpStream::connect(server.addr())
            .await
            .expect("connect");
        let req = format!("GET {CMS}?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        s.write_all(req.as_bytes()).await.expect("write");
        conns.push(s);
    }
    common::eventually("three open watches", common::LIMIT, || {
        server.open_watches() == 3
    })
    .await;
    drop(conns);
    common::eventually(
        "watchers of closed connections are dropped without waiting for an event",
        common::LIMIT,
        || server.open_watches() == 0,
    )
    .await;
}

// Paused time: the watch below ends on its server-side `timeoutSeconds=1` without a real wait.
#[tokio::test(start_paused = true)]
async fn in_band_watch_errors_and_watch_list_off() {
    let server = ApiServer::start().await.expect("server");
    server.fail_next(FailRule::new("watch", "configmaps", 410, 1).in_band());
    let rv = server.resource_version();
    let path = format!("{CMS}?watch=1&resourceVersion={rv}");
    let (status, evs) = common::watch_events(&server, &path, 5).await;
    assert_eq!(status, 200);
    assert_eq!(common::types(&evs), vec!["ERROR"]);
    assert_eq!(
        (
            evs[0]["object"]["code"].as_u64(),
            evs[0]["object"]["reason"].as_str()
        ),
        (Some(410), Some("Expired"))
    );
    // Out-of-band (HTTP status) variant.
    server.fail_next(FailRule::new("watch", "configmaps", 500, 1));
    assert_eq!(
        common::raw(&server, "GET", &path, &[], b"").await.status,
        500
    );

    // WatchList off: streaming lists are refused, ordinary watches still work.
    server.set_watch_list(false);
    let streaming = format!(
        "{CMS}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
    );
    let r = common::raw(&server, "GET", &streaming, &[], b"").await;
    assert_eq!(
        (r.status, r.json()["reason"].as_str()),
        (422, Some("Invalid"))
    );
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("x".into());
    cms.create(&PostParams::default(), &cm)
        .await
        .expect("create");
    // RV 0 still gets the synthetic ADDED, but no initial-events-end bookmark.
    let (_, evs) = common::watch_events(
        &server,
        &format!("{CMS}?watch=1&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=1"),
        5,
    )
    .await;
    assert_eq!(common::types(&evs), vec!["ADDED", "BOOKMARK"]);
    assert!(
        evs[1]["object"]["metadata"].get("annotations").is_none(),
        "only the closing bookmark"
    );
    assert_eq!(
        common::raw(&server, "POST", "/__sim/watchlist/on", &[], b"")
            .await
            .status,
        200
    );
    let (_, evs) = common::watch_events(&server, &streaming, 2).await;
    assert_eq!(common::types(&evs), vec!["ADDED", "BOOKMARK"]);
    assert_eq!(
        evs[1]["object"]["metadata"]["annotations"][apiserver_sim::INITIAL_EVENTS_END],
        "true"
    );
}
