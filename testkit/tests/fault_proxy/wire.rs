//! Wire faults, which only the proxy produces: a watch cut after whole events or mid-event, a
//! list cut mid-body, a closed connection, a truncated body, a stalled page, a delayed answer.

use std::time::Duration;

use futures::StreamExt;
use http::Request;
use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{ListParams, PostParams, WatchParams};
use kube::core::WatchEvent;
use testkit::config_maps::cm;
use testkit::fault::{Effect, InjectFaults};

use crate::common::*;

fn cut(after_events: u32, mid_event: bool) -> Effect {
    Effect::CutStream {
        after_events,
        mid_event,
    }
}

#[tokio::test]
async fn a_watch_cut_mid_event_breaks_the_stream_inside_the_next_event() {
    let (cluster, proxy) = proxied().await;
    let client = proxy.client().unwrap();
    let rv = list_version(&config_maps(client.clone())).await;
    for name in ["a", "b", "c"] {
        cluster.put(name, "1").await.unwrap();
    }
    once(&proxy, "watch", cut(2, true));
    let raw = raw_get(
        &client,
        &config_maps_path(&format!("watch=true&resourceVersion={rv}")),
    )
    .await;
    assert_eq!(raw.status, 200);
    assert!(raw.broken.is_some(), "the stream ended cleanly");
    let lines: Vec<&[u8]> = raw.body.split(|b| *b == b'\n').collect();
    assert_eq!(lines.len(), 3, "{}", String::from_utf8_lossy(&raw.body));
    assert_eq!([event_name(lines[0]), event_name(lines[1])], ["a", "b"]);
    // Half an event: a start of the third, which no client can decode.
    let partial = lines[2];
    assert!(
        partial.starts_with(br#"{"type":"ADDED""#),
        "{}",
        String::from_utf8_lossy(partial)
    );
    assert!(serde_json::from_slice::<serde_json::Value>(partial).is_err());
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_watch_cut_between_events_ends_after_them() {
    let (cluster, proxy) = proxied().await;
    let api = config_maps(proxy.client().unwrap());
    let rv = list_version(&api).await;
    for name in ["a", "b"] {
        cluster.put(name, "1").await.unwrap();
    }
    once(&proxy, "watch", cut(1, false));
    let raw = raw_get(
        &proxy.client().unwrap(),
        &config_maps_path(&format!("watch=1&resourceVersion={rv}")),
    )
    .await;
    assert!(raw.broken.is_some());
    assert!(raw.body.ends_with(b"\n"));
    assert_eq!(event_name(raw.body.trim_ascii_end()), "a");
    // kube's own watch takes the broken stream for its end: one event, then nothing.
    once(&proxy, "watch", cut(1, false));
    let events: Vec<_> = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap()
        .collect()
        .await;
    let names: Vec<String> = events
        .into_iter()
        .map(|event| match event {
            Ok(WatchEvent::Added(cm)) => cm.metadata.name.unwrap_or_default(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(names, ["a"]);
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_list_cut_mid_body_is_a_broken_answer() {
    let (cluster, proxy) = proxied().await;
    cluster.put("a", "1").await.unwrap();
    let client = proxy.client().unwrap();
    let whole = raw_get(&client, &config_maps_path("")).await;
    assert!(whole.broken.is_none());
    once(&proxy, "list", cut(0, false));
    let raw = raw_get(&client, &config_maps_path("")).await;
    assert_eq!(raw.status, 200);
    assert!(raw.broken.is_some(), "the body ended cleanly");
    assert!(!raw.body.is_empty() && raw.body.len() < whole.body.len());
    assert!(raw.body.starts_with(b"{"));
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_closed_connection_fails_the_request_before_it_reaches_the_server() {
    let (cluster, proxy) = proxied().await;
    let api = config_maps(without_retry(&proxy));
    once(&proxy, "create", Effect::CloseConnection);
    match api.create(&PostParams::default(), &cm("closed", "1")).await {
        Err(kube::Error::Api(status)) => panic!("an answer came: {status:?}"),
        Err(_) => {}
        Ok(_) => panic!("the create went through"),
    }
    let Err(kube::Error::Api(status)) = api.get("closed").await else {
        panic!("the ConfigMap was made");
    };
    assert_eq!(status.code, 404);
    // The next request gets a connection and goes through.
    api.create(&PostParams::default(), &cm("closed", "1"))
        .await
        .unwrap();
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_truncated_list_fails_to_decode() {
    let (cluster, proxy) = proxied().await;
    cluster.put("a", "1").await.unwrap();
    let api = config_maps(proxy.client().unwrap());
    once(&proxy, "list", Effect::Truncate { keep_bytes: 40 });
    let raw = raw_get(&proxy.client().unwrap(), &config_maps_path("")).await;
    assert_eq!((raw.body.len(), raw.broken), (40, None));
    once(&proxy, "list", Effect::Truncate { keep_bytes: 40 });
    match api.list(&ListParams::default()).await {
        Err(kube::Error::SerdeError(error)) => assert!(error.is_eof(), "{error}"),
        other => panic!("{other:?}"),
    }
    assert!(api.list(&ListParams::default()).await.is_ok());
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_stalled_page_sends_its_first_bytes_then_waits() {
    let (cluster, proxy) = proxied().await;
    for name in ["a", "b"] {
        cluster.put(name, "1").await.unwrap();
    }
    let client = proxy.client().unwrap();
    let api = config_maps(client.clone());
    once(&proxy, "list", Effect::Stall(Duration::from_secs(3600)));
    let request = Request::get(config_maps_path("limit=1"))
        .body(kube::client::Body::empty())
        .unwrap();
    let (parts, mut body) = client.send(request).await.unwrap().into_parts();
    assert_eq!(parts.status, 200);
    let first = body.frame().await.unwrap().unwrap().into_data().unwrap();
    assert!(
        first.starts_with(b"{") && serde_json::from_slice::<serde_json::Value>(&first).is_err()
    );
    let rest = tokio::spawn(body.collect());
    // Later requests get their answers while the page stays stalled.
    assert!(api.list(&ListParams::default().limit(1)).await.is_ok());
    assert!(!rest.is_finished());
    rest.abort();
    // A short stall: the page comes whole.
    once(&proxy, "list", Effect::Stall(Duration::from_millis(20)));
    let page = api.list(&ListParams::default().limit(1)).await.unwrap();
    assert_eq!(page.items.len(), 1);
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_delayed_answer_comes_after_the_answers_to_later_requests() {
    let (cluster, proxy) = proxied().await;
    cluster.put("a", "1").await.unwrap();
    let api = config_maps(proxy.client().unwrap());
    once(&proxy, "get", Effect::Delay(Duration::from_secs(3600)));
    let slow = tokio::spawn({
        let api = api.clone();
        async move { api.get("a").await }
    });
    testkit::eventually(
        "the delayed get at the proxy",
        Duration::from_secs(20),
        || proxy.request_count("get", "configmaps") == 1,
    )
    .await;
    let quick: ConfigMap = api.get("a").await.unwrap();
    assert_eq!(quick.metadata.name.as_deref(), Some("a"));
    assert!(!slow.is_finished(), "the delayed answer came first");
    slow.abort();
    cluster.shutdown().await;
}
