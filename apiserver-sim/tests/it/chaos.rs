//! Chaos mode: a deterministic schedule, faults that are really injected and counted, a
//! kube watcher that still converges, and the binary's flags.

use crate::common;

use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use apiserver_sim::{ApiServer, ChaosConfig, ChaosEvent, ChaosProfile, FaultKind};
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use serde_json::json;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn chaos_server(seed: u64, profile: ChaosProfile) -> ApiServer {
    ApiServer::builder()
        .chaos(ChaosConfig { seed, profile })
        .start()
        .await
        .expect("server starts")
}

#[test]
fn same_seed_gives_the_same_schedule() {
    let take = |seed, profile| {
        ChaosConfig { seed, profile }
            .schedule()
            .take(300)
            .collect::<Vec<_>>()
    };
    let a = take(42, ChaosProfile::Standard);
    assert_eq!(a, take(42, ChaosProfile::Standard));
    assert_ne!(a, take(43, ChaosProfile::Standard));
    assert_ne!(a, take(42, ChaosProfile::Harsh));
    assert!(
        a.iter()
            .any(|s| matches!(s.event, ChaosEvent::Restart { .. }))
    );
}

#[tokio::test]
async fn per_request_faults_are_injected_and_counted() {
    let server = chaos_server(11, ChaosProfile::Standard).await;
    for i in 0..20 {
        server
            .create_json(json!({"apiVersion": "v1", "kind": "ConfigMap",
                                "metadata": {"name": format!("cm-{i}")}, "data": {"k": "v".repeat(100)}}))
            .expect("seed");
    }
    let mut by_status: BTreeMap<u16, u64> = BTreeMap::new();
    let mut lost = 0;
    for _ in 0..200 {
        let Some(r) = common::try_raw(&server, "GET", CMS).await else {
            lost += 1;
            continue;
        };
        *by_status.entry(r.status).or_default() += 1;
        match r.status {
            200 => assert_eq!(
                r.json()["items"].as_array().map(Vec::len),
                Some(20),
                "tiny writes reassemble into the whole list"
            ),
            429 => assert_eq!(r.header("Retry-After"), Some("1")),
            500 | 503 => assert_eq!(r.json()["kind"], "Status"),
            other => panic!("unexpected status {other}: {}", r.body),
        }
    }
    let stats = server.chaos_stats();
    let errors =
        by_status.get(&500).copied().unwrap_or(0) + by_status.get(&503).copied().unwrap_or(0);
    let throttles = by_status.get(&429).copied().unwrap_or(0);
    assert!(errors > 0 && throttles > 0, "{by_status:?}");
    assert!(stats.get(FaultKind::Latency) > 0, "{stats}");
    assert!(stats.get(FaultKind::TinyWrites) > 0, "{stats}");
    if stats.get(FaultKind::Restart) == 0 {
        // Nothing cut a request: every counted failure was seen, and nothing else.
        assert_eq!(lost, 0);
        assert_eq!(stats.get(FaultKind::ServerError), errors, "{stats}");
        assert_eq!(stats.get(FaultKind::Throttle), throttles, "{stats}");
    } else {
        assert!(stats.get(FaultKind::ServerError) >= errors, "{stats}");
        assert!(stats.get(FaultKind::Throttle) >= throttles, "{stats}");
    }
    // After stop, nothing more is injected.
    server.stop_chaos();
    let before = server.chaos_stats();
    for _ in 0..50 {
        let r = common::try_raw(&server, "GET", CMS).await.expect("answer");
        assert_eq!(r.status, 200);
    }
    assert_eq!(server.chaos_stats(), before);
}

#[tokio::test]
async fn restart_cuts_connections_and_refuses_new_ones_for_a_moment() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = ApiServer::start().await.expect("server");
    let mut watch = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let req = format!("GET {CMS}?watch=true HTTP/1.1\r\nHost: localhost\r\n\r\n");
    watch.write_all(req.as_bytes()).await.expect("write");
    let reader = tokio::spawn(async move {
        let mut buf = Vec::new();
        // Ends (EOF or reset) only when the server cuts the connection.
        let _ = watch.read_to_end(&mut buf).await;
        buf
    });
    common::eventually("one open watch", common::LIMIT, || {
        server.open_watches() == 1
    })
    .await;
    server.restart(Duration::from_secs(60));
    let head = tokio::time::timeout(Duration::from_secs(10), reader)
        .await
        .expect("the restart cut the watch's connection")
        .expect("reader");
    assert!(String::from_utf8_lossy(&head).starts_with("HTTP/1.1 200"));
    common::eventually("no open watch", common::LIMIT, || {
        server.open_watches() == 0
    })
    .await;
    assert!(
        common::try_raw(&server, "GET", CMS).await.is_none(),
        "new connections are closed during the downtime"
    );
    server.restart(Duration::ZERO);
    assert_eq!(
        common::try_raw(&server, "GET", CMS).await.map(|r| r.status),
        Some(200)
    );
}

#[tokio::test]
async fn kube_watcher_converges_under_harsh_chaos() {
    let server = chaos_server(5, ChaosProfile::Harsh).await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    let (reader, writer) = reflector::store::<ConfigMap>();
    let cfg = watcher::Config::default();
    let stream = reflector::reflector(writer, watcher(cms, cfg))
        .default_backoff()
        .applied_objects();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        // Errors are retried by the backoff; only the end of the stream stops this.
        while stream.next().await.is_some() {}
    });
    // Writes go straight to the store (chaos acts on HTTP), spread over a few timeline
    // periods so that drops, compactions and a restart happen while the watcher works.
    for i in 0..120u32 {
        let name = format!("cm-{}", i % 17);
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap",
                         "metadata": {"name": name, "namespace": "default"},
                         "data": {"i": i.to_string()}});
        if i % 7 == 3 {
            let _ = server.delete("", "configmaps", Some("default"), &name);
        } else if server.replace_json(obj.clone()).is_err() {
            server.create_json(obj).expect("create");
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let stats = server.chaos_stats();
    assert!(stats.get(FaultKind::WatchDrop) > 0, "{stats}");
    server.stop_chaos();
    let server_state = || -> BTreeMap<String, String> {
        server
            .list::<ConfigMap>()
            .iter()
            .map(|c| (c.name_any(), c.resource_version().unwrap_or_default()))
            .collect()
    };
    common::eventually(
        &format!("the cache to equal the server after chaos; {stats}"),
        common::LIMIT,
        || {
            let cache: BTreeMap<String, String> = reader
                .state()
                .iter()
                .map(|c| (c.name_any(), c.resource_version().unwrap_or_default()))
                .collect();
            cache == server_state()
        },
    )
    .await;
    task.abort();
}

#[tokio::test]
async fn binary_runs_chaos_from_flags() {
    let dir = tempfile::tempdir().expect("tempdir");
    let kc = dir.path().join("kubeconfig");
    let mut child = Command::new(env!("CARGO_BIN_EXE_apiserver-sim"))
        .args([
            "--port",
            "0",
            "--chaos-seed",
            "7",
            "--chaos-profile",
            "harsh",
        ])
        .arg("--kubeconfig")
        .arg(&kc)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn binary");
    common::eventually_async("kubeconfig written", common::LIMIT, || {
        let ok = std::fs::read_to_string(&kc).is_ok_and(|s| s.ends_with('\n'));
        async move { ok }
    })
    .await;
    let text = std::fs::read_to_string(&kc).expect("kubeconfig");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("kubeconfig JSON");
    let url = doc["clusters"][0]["cluster"]["server"]
        .as_str()
        .expect("server url")
        .to_string();
    let addr = url.trim_start_matches("http://").to_string();
    // `/__sim` is never failed by chaos, but a restart may cut the connection: retry.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let mut chaos = serde_json::Value::Null;
    while tokio::time::Instant::now() < deadline {
        if let Some(v) = get_json(&addr, "/__sim/chaos").await {
            chaos = v;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(chaos["seed"], 7, "{chaos}");
    assert_eq!(chaos["profile"], "harsh", "{chaos}");
    assert_eq!(chaos["active"], true, "{chaos}");

    let out = Command::new(env!("CARGO_BIN_EXE_apiserver-sim"))
        .args(["--port", "0", "--chaos-profile", "wild"])
        .output()
        .expect("binary runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown chaos profile"), "{err}");
}

/// GETs `path` on a fresh connection and decodes the (fixed-length) JSON body.
async fn get_json(addr: &str, path: &str) -> Option<serde_json::Value> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await.ok()?;
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.ok()?;
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut buf))
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&buf);
    let (_, body) = text.split_once("\r\n\r\n")?;
    serde_json::from_str(body.trim()).ok()
}
