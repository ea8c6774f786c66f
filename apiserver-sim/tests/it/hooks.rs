//! Test hooks for the reflector and informer tests: request counts, the watch-list modes
//! (supported, rejected, ignored like an old server) and random failures.

use crate::common;

use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule, WatchListMode};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kube::runtime::watcher::{self, Event, watcher};
use serde_json::json;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

fn cm(name: &str) -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.name = Some(name.into());
    c
}

#[tokio::test]
async fn request_counts_by_verb_and_resource() {
    let server = ApiServer::start().await.expect("server");
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    assert_eq!(server.request_count("list", "configmaps"), 0);

    let pp = PostParams::default();
    cms.create(&pp, &cm("a")).await.expect("create");
    cms.create(&pp, &cm("b")).await.expect("create");
    let a = cms.get("a").await.expect("get");
    cms.replace("a", &pp, &a).await.expect("replace");
    cms.patch(
        "b",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "v"}})),
    )
    .await
    .expect("patch");
    cms.list(&ListParams::default()).await.expect("list");
    let _ = cms
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .expect("watch")
        .boxed()
        .try_next()
        .await;
    cms.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    cms.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("deletecollection");
    let counts = [
        ("create", 2),
        ("get", 1),
        ("update", 1),
        ("patch", 1),
        ("list", 1),
        ("watch", 1),
        ("delete", 1),
        ("deletecollection", 1),
    ];
    for (verb, n) in counts {
        assert_eq!(server.request_count(verb, "configmaps"), n, "{verb}");
    }
    assert_eq!(server.request_count("list", "pods"), 0);

    // Legacy /watch/ paths are watches; failed requests count too (fault rule, 404).
    let legacy = "/api/v1/watch/namespaces/default/configmaps?timeoutSeconds=1";
    assert_eq!(common::watch_events(&server, legacy, 0).await.0, 200);
    server.fail_next(FailRule::new("list", "configmaps", 500, 1));
    assert!(cms.list(&ListParams::default()).await.is_err());
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    assert!(pods.get("missing").await.is_err());
    assert_eq!(server.request_count("watch", "configmaps"), 2);
    assert_eq!(server.request_count("list", "configmaps"), 2);
    assert_eq!(server.request_count("get", "pods"), 1);

    // Over HTTP.
    let r = common::raw(&server, "GET", "/__sim/requests", &[], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["configmaps"]["create"], 2);
    assert_eq!(r.json()["pods"]["get"], 1);

    server.reset_request_counts();
    assert_eq!(server.request_count("create", "configmaps"), 0);
    cms.list(&ListParams::default()).await.expect("list");
    assert_eq!(server.request_count("list", "configmaps"), 1);
    let r = common::raw(&server, "DELETE", "/__sim/requests", &[], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(server.request_count("list", "configmaps"), 0);
}

#[tokio::test]
async fn request_counts_follow_a_kube_watcher() {
    let server = ApiServer::start().await.expect("server");
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let stream = watcher(cms.clone(), watcher::Config::default());
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while stream.next().await.is_some() {}
    });
    common::eventually("the first watch", common::LIMIT, || {
        server.request_count("watch", "configmaps") == 1
    })
    .await;
    assert_eq!(server.request_count("list", "configmaps"), 1);
    // A dropped watch makes the watcher re-watch, without a relist.
    server.drop_watches();
    common::eventually("the re-watch", common::LIMIT, || {
        server.request_count("watch", "configmaps") == 2
    })
    .await;
    assert_eq!(server.request_count("list", "configmaps"), 1);
    task.abort();
}

const STREAMING: &str = "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";

#[tokio::test]
async fn watch_list_ignored_like_an_old_server() {
    let server = ApiServer::start().await.expect("server");
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    cms.create(&PostParams::default(), &cm("a"))
        .await
        .expect("create");
    assert_eq!(server.watch_list_mode(), WatchListMode::Supported);

    // Supported: initial events, then the initial-events-end bookmark.
    let (_, evs) = common::watch_events(&server, &format!("{CMS}?{STREAMING}"), 2).await;
    assert_eq!(common::types(&evs), vec!["ADDED", "BOOKMARK"]);
    assert_eq!(
        evs[1]["object"]["metadata"]["annotations"][apiserver_sim::INITIAL_EVENTS_END],
        "true"
    );

    // Ignored: the synthetic ADDED events, then only the timeout's plain bookmark.
    server.set_watch_list_mode(WatchListMode::Ignored);
    let (status, evs) = common::watch_events(&server, &format!("{CMS}?{STREAMING}"), 5).await;
    assert_eq!(status, 200);
    assert_eq!(common::types(&evs), vec!["ADDED", "BOOKMARK"]);
    assert!(
        evs[1]["object"]["metadata"].get("annotations").is_none(),
        "no initial-events-end bookmark: {evs:?}"
    );
    // With a resourceVersion: only the events after it, as a plain watch.
    let rv = server.resource_version();
    cms.create(&PostParams::default(), &cm("b"))
        .await
        .expect("create");
    let (_, evs) = common::watch_events(
        &server,
        &format!("{CMS}?{STREAMING}&resourceVersion={rv}"),
        5,
    )
    .await;
    assert_eq!(common::types(&evs), vec!["ADDED", "BOOKMARK"]);
    assert_eq!(evs[0]["object"]["metadata"]["name"], "b");

    // kube's streaming-list watcher never gets InitDone from such a server: a live event
    // created after the initial ones still arrives as part of the initial list (a bookmark
    // would have come before it).
    let mut stream = watcher(cms.clone(), watcher::Config::default().streaming_lists()).boxed();
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while seen.len() < 4 {
        let ev = tokio::time::timeout_at(deadline, stream.next())
            .await
            .expect("watcher events in time")
            .expect("watcher stream open")
            .expect("watcher event");
        seen.push(match ev {
            Event::Init => "Init".to_string(),
            Event::InitApply(c) => format!("InitApply {}", c.metadata.name.unwrap_or_default()),
            Event::InitDone => "InitDone".to_string(),
            Event::Apply(c) => format!("Apply {}", c.metadata.name.unwrap_or_default()),
            Event::Delete(_) => "Delete".to_string(),
        });
        if seen.len() == 3 {
            cms.create(&PostParams::default(), &cm("c"))
                .await
                .expect("create");
        }
    }
    assert_eq!(
        seen,
        vec!["Init", "InitApply a", "InitApply b", "InitApply c"]
    );
    drop(stream);

    // Rejected (= set_watch_list(false)): 422. Over HTTP: ignore, off, on.
    server.set_watch_list(false);
    assert_eq!(server.watch_list_mode(), WatchListMode::Rejected);
    let r = common::raw(&server, "GET", &format!("{CMS}?{STREAMING}"), &[], b"").await;
    assert_eq!(r.status, 422);
    let r = common::raw(&server, "POST", "/__sim/watchlist/ignore", &[], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(server.watch_list_mode(), WatchListMode::Ignored);
    let r = common::raw(&server, "POST", "/__sim/watchlist/on", &[], b"").await;
    assert_eq!(r.status, 200);
    assert_eq!(server.watch_list_mode(), WatchListMode::Supported);
}

/// Which of `n` lists fail under a random rule.
async fn failure_pattern(server: &ApiServer, cms: &Api<ConfigMap>, rule: FailRule) -> Vec<bool> {
    server.clear_faults();
    server.fail_next(rule);
    let mut out = Vec::new();
    for _ in 0..200 {
        out.push(cms.list(&ListParams::default()).await.is_err());
    }
    server.clear_faults();
    out
}

#[tokio::test]
async fn random_failures_are_seeded_and_last_until_cleared() {
    let server = ApiServer::start().await.expect("server");
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let a = failure_pattern(
        &server,
        &cms,
        FailRule::random("list", "configmaps", 500, 0.3, 42),
    )
    .await;
    let failed = a.iter().filter(|f| **f).count();
    assert!((30..90).contains(&failed), "{failed} of 200 failed");
    let b = failure_pattern(
        &server,
        &cms,
        FailRule::random("list", "configmaps", 500, 0.3, 42),
    )
    .await;
    assert_eq!(a, b, "same seed, same failures");
    let c = failure_pattern(
        &server,
        &cms,
        FailRule::random("list", "configmaps", 500, 0.3, 43),
    )
    .await;
    assert_ne!(a, c);
    // Every failed request was still counted.
    assert_eq!(server.request_count("list", "configmaps"), 600);
    assert!(cms.list(&ListParams::default()).await.is_ok());

    // "*" matches any resource; probability 1 fails everything; builders compose.
    server.fail_next(FailRule::random("get", "*", 429, 1.0, 1).retry_after(4));
    for path in [
        format!("{CMS}/x"),
        "/api/v1/namespaces/default/pods/x".into(),
    ] {
        let r = common::raw(&server, "GET", &path, &[], b"").await;
        assert_eq!((r.status, r.header("Retry-After")), (429, Some("4")));
    }
    server.clear_faults();
    server.fail_next(FailRule::random("watch", "*", 410, 1.0, 1).in_band());
    let (status, evs) = common::watch_events(&server, &format!("{CMS}?watch=1"), 1).await;
    assert_eq!(
        (status, common::types(&evs)),
        (200, vec!["ERROR".to_string()])
    );
    server.clear_faults();

    // Invalid probabilities are refused with a clear error, not a panic.
    let err = server
        .try_fail_next(FailRule::random("list", "*", 500, 1.5, 1))
        .expect_err("probability 1.5");
    assert!(err.to_string().contains("[0, 1]"), "{err}");
    server.fail_next(FailRule::random("list", "*", 500, -0.5, 1));
    let listed = common::raw(&server, "GET", "/__sim/faults", &[], b"").await;
    assert_eq!(listed.json(), json!([]));

    // Over HTTP.
    let ct = [("Content-Type", "application/json")];
    let bad = br#"{"verb":"list","resource":"*","code":500,"probability":2,"seed":1}"#;
    let r = common::raw(&server, "POST", "/__sim/faults", &ct, bad).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap_or("")
            .contains("probability")
    );
    let good = br#"{"verb":"list","resource":"*","code":503,"probability":1,"seed":9}"#;
    let r = common::raw(&server, "POST", "/__sim/faults", &ct, good).await;
    assert_eq!(r.status, 201);
    for _ in 0..3 {
        assert_eq!(common::raw(&server, "GET", CMS, &[], b"").await.status, 503);
    }
    assert_eq!(
        common::raw(&server, "DELETE", "/__sim/faults", &[], b"")
            .await
            .status,
        200
    );
    assert_eq!(common::raw(&server, "GET", CMS, &[], b"").await.status, 200);
}

#[tokio::test]
async fn batch_seed_writes_reach_watchers_in_order() {
    let server = ApiServer::start().await.expect("server");
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let obj = |name: &str, v: usize| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name}, "data": {"v": v.to_string()}})
    };
    let rv = server
        .create_many((0..600).map(|i| obj(&format!("cm-{i:03}"), 0)))
        .expect("create_many");
    assert_eq!(rv, server.resource_version());
    assert_eq!(server.list::<ConfigMap>().len(), 600);

    // A burst of replaces (several lock chunks) while a watch is open:
    // every event arrives, in order, and no-op replaces emit nothing.
    let mut stream = cms
        .watch(&WatchParams::default(), &rv.to_string())
        .await
        .expect("watch")
        .boxed();
    let updates = (0..1500).map(|i| obj(&format!("cm-{:03}", i % 600), i + 1));
    let last = server.replace_many(updates).expect("replace_many");
    assert_eq!(last, rv + 1500);
    let same = server
        .replace_many([obj("cm-000", 1201)])
        .expect("no-op replace");
    assert_eq!(same, last, "a no-op write does not move the RV");
    let mut seen = 0;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while seen < 1500 {
        let ev = tokio::time::timeout_at(deadline, stream.try_next())
            .await
            .expect("events in time")
            .expect("watch ok")
            .expect("stream open");
        let kube::api::WatchEvent::Modified(cm) = ev else {
            panic!("unexpected event {ev:?}");
        };
        seen += 1;
        let data = cm.data.unwrap_or_default();
        assert_eq!(data.get("v"), Some(&seen.to_string()), "in order");
        assert_eq!(
            cm.metadata.resource_version,
            Some((rv + seen as u64).to_string())
        );
    }

    // A refused write stops the batch; the earlier writes stay.
    let err = server
        .create_many([obj("new-a", 0), obj("cm-000", 0), obj("new-b", 0)])
        .expect_err("already exists");
    assert!(err.to_string().contains("already exists"), "{err}");
    let names: Vec<String> = server
        .list::<ConfigMap>()
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .filter(|n| n.starts_with("new-"))
        .collect();
    assert_eq!(names, vec!["new-a".to_string()]);
    // Unknown kinds are refused.
    assert!(
        server
            .replace_many([json!({"apiVersion": "v9", "kind": "Nope"})])
            .is_err()
    );
}
