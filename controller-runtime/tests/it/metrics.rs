//! `/metrics` parses as Prometheus text exposition and carries every
//! controller-runtime metric with its labels; the counters move with the reconcile outcomes.

use crate::common;

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn},
    leader_election::LeaderElectionConfig,
};
use k8s_openapi::api::core::v1::ConfigMap;
use prometheus_parse::{Sample, Scrape, Value};

/// One GET over a fresh connection: the status code and the body.
pub async fn get(address: SocketAddr, path: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let response = String::from_utf8(response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_owned())
}

fn parse(text: &str) -> Scrape {
    Scrape::parse(text.lines().map(|line| Ok(line.to_owned()))).unwrap()
}

fn find<'a>(scrape: &'a Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<&'a Sample> {
    scrape.samples.iter().find(|sample| {
        sample.metric == metric
            && labels
                .iter()
                .all(|(key, value)| sample.labels.get(key) == Some(*value))
    })
}

fn number(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    match find(scrape, metric, labels).map(|sample| &sample.value) {
        Some(Value::Counter(v) | Value::Gauge(v) | Value::Untyped(v)) => *v,
        other => panic!("{metric}{labels:?}: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_endpoint_serves_controller_runtime_names_and_counters_move() {
    let server = TestCluster::start().await.unwrap();
    let localhost: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let manager = Arc::new(
        manager(&server)
            .metrics_bind_address(localhost)
            .leader_election(
                LeaderElectionConfig::new(ns(), "metrics-test")
                    .lease_duration(Duration::from_secs(3))
                    .renew_deadline(Duration::from_secs(2))
                    .retry_period(Duration::from_millis(500)),
            )
            .build(),
    );
    // `ok*` succeed, `err*` fail once then succeed, `later*` requeue after a while, `fatal`
    // fails terminally.
    let attempts = Counts::default();
    let seen = attempts.clone();
    Controller::new(&manager)
        // The test's ConfigMaps only, which the reconcile and queue counts below are about (a whole
        // cluster puts its root CA ConfigMap into the namespace too).
        .for_(Watch::of::<ConfigMap>().predicate(own_only()))
        .named("mirror")
        .max_concurrent_reconciles(3)
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    let name = req.name().to_owned();
                    seen.hit(&name);
                    if name.starts_with("err") && seen.get(&name) == 1 {
                        return Err(ReconcileError::from(std::io::Error::other("transient")));
                    }
                    if name == "fatal" {
                        return Err(ReconcileError::terminal("permanent"));
                    }
                    if name.starts_with("later") && seen.get(&name) == 1 {
                        return Ok(Action::requeue_after(Duration::from_millis(50)));
                    }
                    Ok(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    eventually("the metrics listener", Duration::from_secs(10), || {
        manager.addresses().metrics.is_some()
    })
    .await;
    let address = manager.addresses().metrics.unwrap();

    for name in ["ok-1", "ok-2", "err-1", "later-1", "fatal"] {
        server.create(&own_cm(name, "1")).await.unwrap();
    }
    eventually("every reconcile", Duration::from_secs(30), || {
        attempts.get("ok-1") == 1
            && attempts.get("ok-2") == 1
            && attempts.get("err-1") == 2
            && attempts.get("later-1") == 2
            && attempts.get("fatal") == 1
    })
    .await;
    // The attempts are counted when a reconcile starts; its outcome is counted when it ends.
    eventually("every outcome counted", Duration::from_secs(10), || {
        let scrape = parse(&manager.metrics().render());
        let outcomes: f64 = ["success", "error", "requeue", "requeue_after"]
            .iter()
            .map(|result| {
                number(
                    &scrape,
                    "controller_runtime_reconcile_total",
                    &[("controller", "mirror"), ("result", result)],
                )
            })
            .sum();
        outcomes == 7.0
    })
    .await;

    let (status, body) = get(address, "/metrics").await;
    assert_eq!(status, 200);
    let scrape = parse(&body);
    let controller = [("controller", "mirror")];
    let total = |result: &str| {
        number(
            &scrape,
            "controller_runtime_reconcile_total",
            &[("controller", "mirror"), ("result", result)],
        )
    };
    // ok-1, ok-2, err-1 (second try) and later-1 (second try) succeeded.
    assert_eq!(total("success"), 4.0);
    // err-1's first try and fatal.
    assert_eq!(total("error"), 2.0);
    assert_eq!(total("requeue_after"), 1.0);
    assert_eq!(total("requeue"), 0.0);
    assert_eq!(
        number(
            &scrape,
            "controller_runtime_reconcile_errors_total",
            &controller
        ),
        2.0
    );
    assert_eq!(
        number(
            &scrape,
            "controller_runtime_terminal_reconcile_errors_total",
            &controller
        ),
        1.0
    );
    assert_eq!(
        number(
            &scrape,
            "controller_runtime_reconcile_panics_total",
            &controller
        ),
        0.0
    );
    assert_eq!(
        number(
            &scrape,
            "controller_runtime_max_concurrent_reconciles",
            &controller
        ),
        3.0
    );
    assert_eq!(
        number(&scrape, "controller_runtime_active_workers", &controller),
        0.0
    );
    match &find(
        &scrape,
        "controller_runtime_reconcile_time_seconds",
        &controller,
    )
    .expect("reconcile time histogram")
    .value
    {
        Value::Histogram(buckets) => {
            assert_eq!(buckets.len(), 41, "40 buckets and +Inf");
            assert_eq!(buckets.last().unwrap().count, 7.0, "seven reconciles timed");
        }
        other => panic!("reconcile time is {other:?}"),
    }

    let queue = [("name", "mirror"), ("controller", "mirror")];
    assert_eq!(number(&scrape, "workqueue_depth", &queue), 0.0);
    // Five objects, two requeues: err-1 (rate limited) and later-1 (after).
    assert_eq!(number(&scrape, "workqueue_adds_total", &queue), 7.0);
    assert_eq!(number(&scrape, "workqueue_retries_total", &queue), 2.0);
    for histogram in [
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
    ] {
        assert!(
            matches!(
                find(&scrape, histogram, &queue).map(|s| &s.value),
                Some(Value::Histogram(_))
            ),
            "{histogram}"
        );
    }
    for gauge in [
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
    ] {
        number(&scrape, gauge, &queue);
    }
    assert_eq!(
        number(
            &scrape,
            "leader_election_master_status",
            &[("name", "metrics-test")]
        ),
        1.0
    );
    // The cache holds every ConfigMap of the namespace: the test's five and those a whole
    // cluster puts there.
    let listed = server.list::<ConfigMap>().await.unwrap();
    let own = listed.iter().filter(|cm| is_own_meta(&cm.metadata)).count();
    assert_eq!(own, 5);
    let held = listed.len();
    let informer = find(&scrape, "controller_runtime_informer_cache_objects", &[])
        .expect("informer cache size")
        .labels
        .get("informer")
        .unwrap()
        .to_owned();
    let informer = [("informer", informer.as_str())];
    assert_eq!(
        number(
            &scrape,
            "controller_runtime_informer_cache_objects",
            &informer
        ),
        held as f64
    );
    // The informer listed with a streaming list, which counts as a watch.
    assert_eq!(
        number(
            &scrape,
            "controller_runtime_informer_lists_total",
            &informer
        ),
        0.0
    );
    assert!(
        number(
            &scrape,
            "controller_runtime_informer_watches_total",
            &informer
        ) >= 1.0
    );
    assert!(
        number(
            &scrape,
            "controller_runtime_informer_last_sync_resource_version",
            &informer
        ) >= 1.0
    );
    assert!(
        find(
            &scrape,
            "controller_runtime_informer_listener_buffer_length",
            &informer
        )
        .is_some()
    );

    // Every documented name is there with its TYPE (counters with `_total`).
    let names: BTreeSet<&str> = scrape.docs.keys().map(String::as_str).collect();
    for name in [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_terminal_reconcile_errors_total",
        "controller_runtime_reconcile_panics_total",
        "controller_runtime_reconcile_time_seconds",
        "controller_runtime_max_concurrent_reconciles",
        "controller_runtime_active_workers",
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries_total",
        "leader_election_master_status",
    ] {
        assert!(names.contains(name), "{name} missing from {names:?}");
    }
    // One more success moves only the success counter.
    server.create(&own_cm("ok-3", "1")).await.unwrap();
    eventually("the new reconcile", Duration::from_secs(30), || {
        attempts.get("ok-3") == 1
    })
    .await;
    eventually("the success counter", Duration::from_secs(10), || {
        let text = manager.metrics().render();
        let scrape = parse(&text);
        number(
            &scrape,
            "controller_runtime_reconcile_total",
            &[("controller", "mirror"), ("result", "success")],
        ) == 5.0
    })
    .await;

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn managers_have_independent_registries() {
    let server = TestCluster::start().await.unwrap();
    let one = manager(&server).build();
    let two = manager(&server).build();
    Controller::new(&one)
        .for_(Watch::of::<ConfigMap>())
        .named("only-in-one")
        .build(reconciler_fn(
            |_req: Request, _ctx: Context<ConfigMap>| async {
                Ok::<_, std::convert::Infallible>(Action::done())
            },
        ))
        .unwrap();
    assert!(
        one.metrics()
            .render()
            .contains(r#"controller="only-in-one""#)
    );
    assert!(!two.metrics().render().contains("only-in-one"));
    assert!(one.metrics().render_openmetrics().ends_with("# EOF\n"));
    // Dropped, not shut down: nothing connected to it.
    drop(server);
}
