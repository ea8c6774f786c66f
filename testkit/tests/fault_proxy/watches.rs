//! What the proxy plays on watches besides faults: the watch-list switch, bookmarks on demand,
//! and new watches held back while the test changes the server.

use std::time::Duration;

use apiserver_sim::WatchListMode;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::WatchParams;
use kube::core::WatchEvent;
use testkit::config_maps::OWN_SELECTOR;
use testkit::fault::InjectFaults;

use crate::common::*;

/// The events of a streaming list of the test's own ConfigMaps up to its end bookmark, or
/// the refusal's code.
async fn streaming_list(proxy: &testkit::proxy::FaultProxy) -> Result<Vec<String>, u16> {
    let api = config_maps(proxy.client().unwrap());
    let params = WatchParams::streaming_lists().labels(OWN_SELECTOR);
    let mut events = match api.watch(&params, "").await {
        Ok(events) => events.boxed(),
        Err(kube::Error::Api(status)) => return Err(status.code),
        Err(error) => panic!("{error}"),
    };
    let mut seen = Vec::new();
    while let Some(event) = events.next().await {
        match event.unwrap() {
            WatchEvent::Added(cm) => seen.push(cm.metadata.name.unwrap_or_default()),
            WatchEvent::Bookmark(b) => {
                let end = b
                    .metadata
                    .annotations
                    .contains_key("k8s.io/initial-events-end");
                seen.push(format!("BOOKMARK end={end}"));
                if end {
                    break;
                }
            }
            other => panic!("{other:?}"),
        }
        if seen.len() == 2 {
            break;
        }
    }
    Ok(seen)
}

/// The next event that is not a bookmark (a server sends some of its own now and then).
async fn next_change(
    events: &mut futures::stream::BoxStream<'static, kube::Result<WatchEvent<ConfigMap>>>,
) -> WatchEvent<ConfigMap> {
    loop {
        match events.next().await.unwrap().unwrap() {
            WatchEvent::Bookmark(_) => {}
            event => return event,
        }
    }
}

#[tokio::test]
async fn the_watch_list_switch_serves_refuses_or_ignores_streaming_lists() {
    let (cluster, proxy) = proxied().await;
    cluster.put_own("a", "0").await.unwrap();

    assert_eq!(
        streaming_list(&proxy).await,
        Ok(vec!["a".into(), "BOOKMARK end=true".into()])
    );
    proxy.set_watch_list_mode(WatchListMode::Rejected);
    assert_eq!(streaming_list(&proxy).await, Err(422));
    // Served as a plain watch from the latest state: the current objects as ADDED events,
    // then live events, and no end bookmark (nor any other).
    proxy.set_watch_list_mode(WatchListMode::Ignored);
    let api = config_maps(proxy.client().unwrap());
    let params = WatchParams::streaming_lists().labels(OWN_SELECTOR);
    let mut events = api.watch(&params, "").await.unwrap().boxed();
    let first = events.next().await.unwrap().unwrap();
    assert!(matches!(&first, WatchEvent::Added(cm) if cm.metadata.name.as_deref() == Some("a")));
    cluster.put_own("b", "0").await.unwrap();
    let next = events.next().await.unwrap().unwrap();
    assert!(
        matches!(&next, WatchEvent::Added(cm) if cm.metadata.name.as_deref() == Some("b")),
        "{next:?}"
    );
}

#[tokio::test]
async fn bookmarks_on_demand_reach_the_watches_that_allow_them() {
    let (cluster, proxy) = proxied().await;
    let api = config_maps(proxy.client().unwrap());
    let rv = list_version(&api).await;
    let with = WatchParams::default().labels(OWN_SELECTOR);
    let mut bookmarked = api.watch(&with, &rv).await.unwrap().boxed();
    let without = with.clone().disable_bookmarks();
    let mut plain = api.watch(&without, &rv).await.unwrap().boxed();
    open_watches(&proxy, 2).await;

    // A write the ConfigMap watches do not carry moves the server on.
    let mut secret = Secret::default();
    secret.metadata.name = Some("elsewhere".into());
    let written = cluster.create(&secret).await.unwrap();
    let written: u64 = written.metadata.resource_version.unwrap().parse().unwrap();
    let asked = proxy.send_bookmarks().await.unwrap();
    assert!(asked >= written, "{asked} < {written}");
    // (A real server may send a bookmark of its own first.)
    let mut got = None;
    while got != Some(asked) {
        match bookmarked.next().await.unwrap().unwrap() {
            WatchEvent::Bookmark(b) => {
                assert_eq!(b.types.kind, "ConfigMap");
                got = Some(b.metadata.resource_version.parse().unwrap());
            }
            other => panic!("{other:?}"),
        }
    }

    cluster.put_own("a", "0").await.unwrap();
    let next = plain.next().await.unwrap().unwrap();
    assert!(matches!(next, WatchEvent::Added(_)), "{next:?}");
    let next = next_change(&mut bookmarked).await;
    assert!(matches!(next, WatchEvent::Added(_)), "{next:?}");
}

#[tokio::test]
async fn a_held_watch_reaches_the_server_only_when_let_go() {
    let (cluster, proxy) = proxied().await;
    let api = config_maps(proxy.client().unwrap());
    let rv = list_version(&api).await;
    cluster.put_own("a", "0").await.unwrap();

    let hold = proxy.hold_watches();
    let watching = tokio::spawn(async move { watch_from(&api, &rv).await.next().await });
    testkit::eventually("the watch to arrive", Duration::from_secs(10), || {
        proxy.request_count("watch", "configmaps") == 1
    })
    .await;
    assert_eq!(proxy.open_watches(), 0, "held in the proxy");
    // Compacted past the watch's version before it reaches the server: it expires.
    proxy.compact().await.unwrap();
    drop(hold);
    let first = watching.await.unwrap().unwrap().unwrap();
    assert!(
        matches!(&first, WatchEvent::Error(e) if e.code == 410),
        "{first:?}"
    );
}
