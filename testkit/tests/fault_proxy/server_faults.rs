//! The server-wide faults behind the proxy — dropped watches, a restart, compaction on demand —
//! and its record of requests and open watches.

use std::time::Duration;

use futures::StreamExt;
use kube::api::{ListParams, PostParams, VersionMatch, WatchParams};
use kube::core::WatchEvent;
use testkit::config_maps::cm;
use testkit::fault::InjectFaults;

use crate::common::*;

#[tokio::test]
async fn dropped_watches_end_cleanly_and_are_no_longer_open() {
    let (cluster, proxy) = proxied().await;
    let api = config_maps(proxy.client().unwrap());
    let rv = list_version(&api).await;
    let mut events = watch_from(&api, &rv).await;
    open_watches(&proxy, 1).await;
    cluster.put("a", "1").await.unwrap();
    assert!(matches!(
        events.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    proxy.drop_watches();
    assert!(events.next().await.is_none(), "the watch went on");
    open_watches(&proxy, 0).await;
    // A watch opened afterwards is not dropped.
    let mut events = watch_from(&api, &rv).await;
    assert!(matches!(
        events.next().await,
        Some(Ok(WatchEvent::Added(_)))
    ));
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_restart_cuts_open_streams_and_closes_connections_for_its_downtime() {
    let (cluster, proxy) = proxied().await;
    let client = proxy.client().unwrap();
    let api = config_maps(without_retry(&proxy));
    let rv = list_version(&api).await;
    let watch = tokio::spawn({
        let client = client.clone();
        let path = config_maps_path(&format!("watch=1&resourceVersion={rv}"));
        async move { raw_get(&client, &path).await }
    });
    open_watches(&proxy, 1).await;
    proxy.restart(Duration::from_secs(3600));
    let watch = watch.await.unwrap();
    assert!(watch.broken.is_some(), "the watch ended cleanly");
    assert!(api.list(&ListParams::default()).await.is_err());
    assert_eq!(proxy.open_watches(), 0);
    // A restart without downtime ends the one running.
    proxy.restart(Duration::ZERO);
    assert!(api.list(&ListParams::default()).await.is_ok());
    cluster.shutdown().await;
}

#[tokio::test]
async fn compaction_expires_older_watches_exact_lists_and_continue_tokens() {
    let (cluster, proxy) = proxied().await;
    for name in ["a", "b"] {
        cluster.put(name, "1").await.unwrap();
    }
    let api = config_maps(without_retry(&proxy));
    let first_page = api.list(&ListParams::default().limit(1)).await.unwrap();
    let old = first_page.metadata.resource_version.clone().unwrap();
    let token = first_page.metadata.continue_.clone().unwrap();
    cluster.put("c", "1").await.unwrap();
    let compacted = proxy.compact().await.unwrap();
    assert!(compacted > old.parse::<u64>().unwrap());

    // A watch from before: HTTP 200, then 410 in band.
    let mut events = watch_from(&api, &old).await;
    let Some(Ok(WatchEvent::Error(status))) = events.next().await else {
        panic!("no ERROR event");
    };
    assert_eq!(status.code, 410);
    assert!(
        status.message.starts_with("too old resource version"),
        "{}",
        status.message
    );
    // An exact list at it, and the rest of a list from before.
    let exact = ListParams::default().at(&old).matching(VersionMatch::Exact);
    let Err(kube::Error::Api(status)) = api.list(&exact).await else {
        panic!("the exact list was served");
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    let rest = ListParams::default().limit(1).continue_token(&token);
    let Err(kube::Error::Api(status)) = api.list(&rest).await else {
        panic!("the continued list was served");
    };
    assert_eq!(status.code, 410);
    // What a compacted server still serves: a watch from the compacted version, lists.
    let mut events = api
        .watch(&WatchParams::default(), &compacted.to_string())
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &cm("d", "1"))
        .await
        .unwrap();
    let Some(Ok(WatchEvent::Added(added))) = events.next().await else {
        panic!("no event after the compacted version");
    };
    assert_eq!(added.metadata.name.as_deref(), Some("d"));
    assert!(api.list(&ListParams::default().limit(1)).await.is_ok());
    cluster.shutdown().await;
}

#[tokio::test]
async fn requests_are_counted_as_the_simulator_counts_them() {
    let (cluster, proxy) = proxied().await;
    let api = config_maps(proxy.client().unwrap());
    let rv = list_version(&api).await;
    api.create(&PostParams::default(), &cm("a", "1"))
        .await
        .unwrap();
    api.get("a").await.unwrap();
    api.list(&ListParams::default()).await.unwrap();
    let mut events = watch_from(&api, &rv).await;
    assert!(events.next().await.is_some());
    drop(events);
    let counts = proxy.request_counts();
    let expected = [("create", 1), ("get", 1), ("list", 2), ("watch", 1)];
    assert_eq!(
        counts["configmaps"]
            .iter()
            .map(|(v, n)| (*v, *n))
            .collect::<Vec<_>>(),
        expected
    );
    if let Some(sim) = cluster.sim() {
        // The simulator counted the same requests.
        for (verb, n) in expected {
            assert_eq!(sim.request_count(verb, "configmaps"), n, "{verb}");
        }
    }
    proxy.reset_request_counts();
    assert_eq!(proxy.request_count("list", "configmaps"), 0);
    cluster.shutdown().await;
}
