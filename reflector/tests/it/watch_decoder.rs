//! The watch-event line decoder: how a body is cut into chunks never changes what it decodes
//! to, no input makes it panic or hold more than its line limit; and over real HTTP, a watch
//! that fails to open keeps kube's error values, and an oversize line makes the reflector
//! relist.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use proptest::prelude::*;
use reflector::{
    ApiListerWatcher, Error, ListerWatcher, ReflectorOptions, WatchDecoding, WatchEvent,
    WatchParams, fuzzing,
};

/// Decodes `body` cut at `cuts` (reduced modulo its length + 1), checking the buffering bound.
fn decode(body: &[u8], cuts: &[usize], max_line_len: usize) -> Vec<String> {
    let cuts: Vec<usize> = cuts.iter().map(|c| c % (body.len() + 1)).collect();
    fuzzing::decode_in_chunks::<ConfigMap>(body, &cuts, max_line_len).unwrap()
}

/// One line of a plausible watch body (valid events, and a few bad lines among them).
fn line() -> impl Strategy<Value = String> {
    let name = "[a-z][a-z0-9-]{0,12}";
    let value = "[ -~é☃]{0,40}";
    prop_oneof![
        4 => (prop_oneof![Just("ADDED"), Just("MODIFIED"), Just("DELETED")], name, value, any::<bool>()).prop_map(
            |(event_type, name, value, type_first)| {
                let object = serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default", "resourceVersion": "3"},
                    "data": {"v": value},
                });
                // The API server writes the type first; the decoder accepts either order.
                if type_first {
                    format!(r#"{{"type":"{event_type}","object":{object}}}"#)
                } else {
                    format!(r#"{{"object":{object},"type":"{event_type}"}}"#)
                }
            }
        ),
        1 => "[0-9]{1,6}".prop_map(|rv| format!(
            r#"{{"type":"BOOKMARK","object":{{"apiVersion":"v1","kind":"ConfigMap","metadata":{{"resourceVersion":"{rv}"}}}}}}"#
        )),
        1 => Just(r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old","reason":"Expired","code":410}}"#.to_string()),
        1 => Just(String::new()),
        1 => Just(r#"{"type":"RENAMED","object":{}}"#.to_string()),
        1 => "[ -~]{0,30}",
    ]
}

/// Line endings: `\n` or `\r\n`.
fn body() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((line(), any::<bool>()), 0..12).prop_map(|lines| {
        let mut body = Vec::new();
        for (line, crlf) in lines {
            body.extend_from_slice(line.as_bytes());
            body.extend_from_slice(if crlf { b"\r\n" } else { b"\n" });
        }
        body
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_split_of_a_watch_body_yields_the_events_of_the_whole(
        body in body(),
        cuts in prop::collection::vec(any::<usize>(), 0..20),
        truncate in any::<Option<usize>>(),
    ) {
        let whole = decode(&body, &[], usize::MAX);
        prop_assert_eq!(&decode(&body, &cuts, usize::MAX), &whole);
        // Every valid event line decodes: as many ADDED/MODIFIED/DELETED/BOOKMARK/ERROR items
        // as the body has such lines.
        let events = whole.iter().filter(|d| !d.starts_with("malformed") && !d.starts_with("unknown type")).count();
        let text = String::from_utf8_lossy(&body);
        let expected = text.lines().filter(|l| {
            let json = serde_json::from_str::<serde_json::Value>(l).ok();
            let event_type = json.as_ref().and_then(|v| v.get("type")).and_then(|t| t.as_str());
            matches!(event_type, Some("ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR"))
        }).count();
        prop_assert_eq!(events, expected);
        // A body cut short anywhere decodes the same way however it is split.
        if let Some(end) = truncate {
            let short = &body[..end % (body.len() + 1)];
            prop_assert_eq!(decode(short, &cuts, usize::MAX), decode(short, &[], usize::MAX));
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_split_the_same_way(
        limit in prop_oneof![0u16..300, Just(0)],
        seed in any::<u8>(),
        body in prop::collection::vec(prop_oneof![any::<u8>(), Just(b'\n'), Just(b'{'), Just(b'"')], 0..600),
    ) {
        let mut input = limit.to_le_bytes().to_vec();
        input.push(seed);
        input.extend(body);
        if let Err(violation) = fuzzing::check_watch_line_decoder::<ConfigMap>(&input) {
            panic!("{violation}");
        }
    }
}

#[tokio::test]
async fn http_errors_on_opening_a_watch_keep_the_status_and_its_classification() {
    let server = TestCluster::start_with_faults().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client_without_retry(&server), ns());
    let lister_watcher = ApiListerWatcher::new(api);
    let params = WatchParams::default();
    for (code, check) in [
        (429, Error::is_too_many_requests as fn(&Error) -> bool),
        (410, Error::is_expired),
        (500, |e: &Error| {
            e.code() == Some(500) && !e.is_retriable_watch_error()
        }),
    ] {
        server
            .inject(FailRule::new("watch", "configmaps", code, 1))
            .unwrap();
        let Err(error) = lister_watcher.watch(&params, "0").await else {
            panic!("the watch opened despite a {code}");
        };
        assert!(
            matches!(
                &error,
                Error::Request {
                    verb: "watch",
                    source: kube::Error::Api(status),
                } if status.code == code
            ),
            "{code}: {error:?}"
        );
        assert!(check(&error), "{code}: {error}");
    }
}

#[tokio::test]
async fn a_watch_over_http_yields_events_and_the_in_band_error() {
    let server = TestCluster::start_with_faults().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    // The test's own objects only: a whole cluster's controller-manager writes ConfigMaps of
    // its own into the namespace.
    let lister_watcher = ApiListerWatcher::new(api).labels(OWN_SELECTOR);
    let list = lister_watcher.list(&Default::default()).await.unwrap();
    let rv = list.metadata.resource_version.unwrap();
    let mut events = lister_watcher
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap();
    server.put_own("a", "1").await.unwrap();
    server.put_own("a", "2").await.unwrap();
    server.remove("a").await.unwrap();
    let value = |cm: ConfigMap| {
        cm.data
            .and_then(|d| d.get("v").cloned())
            .unwrap_or_default()
    };
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match events.next().await {
            Some(Ok(WatchEvent::Added(cm))) => seen.push(format!("ADDED {}", value(cm))),
            Some(Ok(WatchEvent::Modified(cm))) => seen.push(format!("MODIFIED {}", value(cm))),
            Some(Ok(WatchEvent::Deleted(cm))) => seen.push(format!("DELETED {}", value(cm))),
            other => panic!("unexpected item {other:?}"),
        }
    }
    assert_eq!(seen, ["ADDED 1", "MODIFIED 2", "DELETED 2"]);

    // A watch from a compacted resource version: HTTP 200, then one ERROR event with the 410.
    server
        .inject(FailRule::new("watch", "configmaps", 410, 1).in_band())
        .unwrap();
    let mut events = lister_watcher
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap();
    let Some(Ok(WatchEvent::Error(status))) = events.next().await else {
        panic!("no ERROR event");
    };
    assert_eq!(status.code, 410);
    assert!(Error::Status(status).is_expired());
}

#[tokio::test(start_paused = true)]
async fn an_oversize_watch_line_is_reported_and_the_reflector_relists_to_recover_it() {
    let server = TestCluster::start().await.unwrap();
    server.put("small", "0").await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    let lister_watcher = Recorder::new(Arc::new(
        ApiListerWatcher::new(api).max_watch_line_len(2048),
    ));
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lister_watcher.clone(), store.clone(), seen.options());
    converged(&server, &*store).await;
    eventually("the watch", Duration::from_secs(10), || {
        !lister_watcher.calls("watch").is_empty()
    })
    .await;

    server.put("big", &"x".repeat(4096)).await.unwrap();
    converged(&server, &*store).await;
    let texts: Vec<_> = seen.errors.lock().iter().map(|e| e.text.clone()).collect();
    assert!(
        texts.iter().any(|t| t.contains("exceeds 2048 bytes")),
        "{texts:?}"
    );
    assert_eq!(
        lister_watcher.calls("list").len(),
        2,
        "one relist brought the big object"
    );
    running.stop().await;
}

/// The reflector's decoding option reaches the lister-watcher with every watch it opens, and
/// either decoder keeps the store equal to the server.
#[tokio::test(start_paused = true)]
async fn the_watch_decoding_option_reaches_every_watch_and_either_decoder_converges() {
    let server = TestCluster::start().await.unwrap();
    for i in 0..3 {
        server.put(&format!("cm-{i}"), "0").await.unwrap();
    }
    let mut reflectors = Vec::new();
    for decoding in [
        None,
        Some(WatchDecoding::Inline),
        Some(WatchDecoding::Pipelined),
    ] {
        let lister_watcher = config_maps(server.client().unwrap());
        let store = Arc::new(cache());
        let options = match decoding {
            Some(decoding) => ReflectorOptions::default().watch_decoding(decoding),
            None => ReflectorOptions::default(),
        };
        let running = spawn(lister_watcher.clone(), store.clone(), options);
        reflectors.push((decoding, lister_watcher, store, running));
    }
    for (_, _, store, _) in &reflectors {
        converged(&server, &**store).await;
    }
    server.put("cm-1", "1").await.unwrap();
    server.remove("cm-2").await.unwrap();
    for (decoding, lister_watcher, store, _) in &reflectors {
        converged(&server, &**store).await;
        let expected = decoding.unwrap_or(WatchDecoding::Pipelined);
        let asked: Vec<_> = lister_watcher
            .calls("watch")
            .iter()
            .map(|call| call.decoding)
            .collect();
        assert!(!asked.is_empty());
        assert!(asked.iter().all(|d| *d == Some(expected)), "{asked:?}");
    }
    for (_, _, _, running) in reflectors {
        running.stop().await;
    }
}
