//! Bench binary: list throughput (objects/s for a 10k-object list) and watch fan-out
//! (events/s to 1 and 10 watchers). Run with `cargo bench -p kube-rt-apiserver-sim`.
//!
//! Writes are made through the in-process seed API so that the figures measure the
//! server's list and watch paths, not an HTTP write client.

use std::time::{Duration, Instant};

use apiserver_sim::ApiServer;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn cm(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "labels": {"app": "bench"}},
           "data": {"k": "v"}})
}

/// A Pod of about 2.5 KB of JSON, like the informer benchmarks use.
fn pod(name: &str, gen_: usize) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "default",
            "labels": {"app": "bench", "tier": "backend", "track": "stable", "pod-template-hash": "7d9f8b6c5d"},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2025-01-01T00:00:00Z",
                            "prometheus.io/scrape": "true", "prometheus.io/port": "9090",
                            "note": "x".repeat(600)}},
        "spec": {"nodeName": "", "serviceAccountName": "default", "restartPolicy": "Always",
            "containers": [{"name": "app", "image": "registry.example.com/team/app:1.2.3",
                "args": ["--port=8080", "--verbose", format!("--generation={gen_}")],
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "env": [{"name": "MODE", "value": "production"}, {"name": "REGION", "value": "eu-west-1"}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "500m", "memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5}}]},
        "status": {"phase": "Running", "podIP": "10.0.0.1", "hostIP": "192.0.2.1",
            "startTime": "2025-01-01T00:00:00Z",
            "conditions": [
                {"type": "Initialized", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}})
}

async fn pods_bench(objects: usize) {
    let server = ApiServer::builder()
        .history_limit(1000)
        .start()
        .await
        .expect("server");
    let start = Instant::now();
    for i in 0..objects {
        server
            .create_json(pod(&format!("pod-{i:06}"), 0))
            .expect("seed");
    }
    let created = start.elapsed();
    let start = Instant::now();
    for i in 0..objects {
        server
            .replace_json(pod(&format!("pod-{i:06}"), 1))
            .expect("update");
    }
    let updated = start.elapsed();
    let client = server.client().expect("client");
    let start = Instant::now();
    let mut token = String::new();
    let mut listed = 0usize;
    let mut bytes = 0usize;
    loop {
        let mut uri = "/api/v1/namespaces/default/pods?limit=500".to_string();
        if !token.is_empty() {
            uri.push_str(&format!("&continue={token}"));
        }
        let req = http::Request::get(uri).body(Vec::new()).expect("request");
        let body = client.request_text(req).await.expect("page");
        bytes += body.len();
        let page: serde_json::Value = serde_json::from_str(&body).expect("json");
        listed += page["items"].as_array().map(Vec::len).unwrap_or(0);
        token = page["metadata"]["continue"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if token.is_empty() {
            break;
        }
    }
    let list = start.elapsed();
    println!(
        "pods (~{} B JSON each): {objects} creates at {:.0}/s, {objects} updates at {:.0}/s, \
         paginated list (500/page, client parses each page as JSON) of {listed} in {:.0} ms = {:.0} objects/s",
        bytes / listed.max(1),
        objects as f64 / created.as_secs_f64(),
        objects as f64 / updated.as_secs_f64(),
        list.as_secs_f64() * 1e3,
        listed as f64 / list.as_secs_f64(),
    );
    teardown(server).await;
}

/// The headline figure of one scenario run, for the median over repeated runs.
struct Figure {
    /// Objects, events or writes per second.
    rate: f64,
    /// Process CPU time per event (or object), when known.
    cpu_us: Option<f64>,
}

async fn list_bench(objects: usize, rounds: usize) -> Figure {
    let server = ApiServer::builder().start().await.expect("server");
    for i in 0..objects {
        server.create_json(cm(&format!("cm-{i:06}"))).expect("seed");
    }
    let client = server.client().expect("client");
    let mut total = Duration::ZERO;
    let mut bytes = 0;
    for _ in 0..rounds {
        let req = http::Request::get("/api/v1/namespaces/default/configmaps")
            .body(Vec::new())
            .expect("request");
        let start = Instant::now();
        let body = client.request_text(req).await.expect("list");
        total += start.elapsed();
        bytes = body.len();
    }
    let per = total / rounds as u32;
    let rate = objects as f64 / per.as_secs_f64();
    println!(
        "list: {objects} objects ({} KiB) in {:.1} ms per list = {:.0} objects/s",
        bytes / 1024,
        per.as_secs_f64() * 1e3,
        rate
    );
    teardown(server).await;
    Figure { rate, cpu_us: None }
}

/// Stops a scenario's server and lets its state be freed before the next scenario starts:
/// the last task holding it frees it on a worker thread, which would otherwise overlap
/// (and slow, through the allocator) the next measurement.
async fn teardown(server: ApiServer) {
    server.shutdown().await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
}

/// Opens a raw watch and counts events until `want` arrived.
async fn watcher(addr: std::net::SocketAddr, rv: u64, want: usize) -> usize {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "GET /api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv} HTTP/1.1\r\nHost: x\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = vec![0u8; 256 * 1024];
    let mut seen = 0;
    while seen < want {
        let n = s.read(&mut buf).await.expect("read");
        if n == 0 {
            break;
        }
        // Every event line ends in '\n'; so do the headers and chunk-size lines, which
        // end in "\r\n" (JSON text carries no raw '\r'). Counting both is vectorised.
        let bytes = &buf[..n];
        let newlines = bytes.iter().filter(|b| **b == b'\n').count();
        let crs = bytes.iter().filter(|b| **b == b'\r').count();
        seen += newlines.saturating_sub(crs);
    }
    seen
}

/// CPU time (user + system, all threads) this process used so far, from `/proc/self/stat`
/// (Linux; in clock ticks of 10 ms). None elsewhere.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// CPU microseconds per event since `since`.
fn cpu_us_per(events: usize, since: Option<Duration>) -> Option<f64> {
    match (since, cpu_time()) {
        (Some(a), Some(b)) if events > 0 => {
            Some(b.saturating_sub(a).as_secs_f64() * 1e6 / events as f64)
        }
        _ => None,
    }
}

fn cpu_text(cpu_us: Option<f64>) -> String {
    cpu_us
        .map(|c| format!(", CPU {c:.2} us/event"))
        .unwrap_or_default()
}

/// How the fan-out bench writes.
#[derive(Clone, Copy, PartialEq)]
enum Writes {
    /// One `replace_json` per event.
    Single,
    /// `replace_many` in batches of 1000.
    Batch,
}

async fn fanout_bench(watchers: usize, events: usize, mode: Writes) -> Figure {
    const OBJECTS: usize = 1000;
    let server = ApiServer::builder()
        .watch_buffer(events + 16)
        .history_limit(
            std::env::var("SIM_HIST")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1000),
        )
        .start()
        .await
        .expect("server");
    server
        .create_many((0..OBJECTS).map(|i| cm(&format!("e-{i:04}"))))
        .expect("seed");
    let rv = server.resource_version();
    let handles: Vec<_> = (0..watchers)
        .map(|_| tokio::spawn(watcher(server.addr(), rv, events)))
        .collect();
    // Let the watches connect before producing.
    let deadline = Instant::now() + Duration::from_secs(10);
    while server.open_watches() < watchers && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Each update is a fresh object, as a test would send it (cloned from a template,
    // the cheapest way to build one; the names are formatted once).
    let template = cm("template");
    let names: Vec<serde_json::Value> = (0..OBJECTS).map(|i| json!(format!("e-{i:04}"))).collect();
    let update = |i: usize| {
        let mut obj = template.clone();
        obj["metadata"]["name"] = names[i % OBJECTS].clone();
        obj["data"]["k"] = json!(i.to_string());
        obj
    };
    let cpu = cpu_time();
    let start = Instant::now();
    match mode {
        Writes::Single => {
            for i in 0..events {
                server.replace_json(update(i)).expect("update");
            }
        }
        Writes::Batch => {
            for chunk in (0..events).collect::<Vec<_>>().chunks(1000) {
                server
                    .replace_many(chunk.iter().map(|i| update(*i)))
                    .expect("update");
            }
        }
    }
    let produced = start.elapsed();
    let mut received = 0;
    for h in handles {
        received += h.await.expect("join");
    }
    let elapsed = start.elapsed();
    let how = match mode {
        Writes::Single => "replace_json",
        Writes::Batch => "replace_many",
    };
    let cpu_us = cpu_us_per(events, cpu);
    println!(
        "live watch fan-out ({how}): {watchers} watcher(s), {events} updates of {OBJECTS} small objects written during the watch: \
         {received} delivered in {:.0} ms = {:.0} events/s in total, {:.0} events/s per watcher \
         (the in-process writes alone took {:.0} ms = {:.0} writes/s{})",
        elapsed.as_secs_f64() * 1e3,
        received as f64 / elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64(),
        produced.as_secs_f64() * 1e3,
        events as f64 / produced.as_secs_f64(),
        cpu_text(cpu_us),
    );
    teardown(server).await;
    // With watchers the delivered events count; without, the writes.
    let rate = if watchers == 0 {
        events as f64 / produced.as_secs_f64()
    } else {
        received as f64 / elapsed.as_secs_f64()
    };
    Figure { rate, cpu_us }
}

/// Delivery alone: the events are already in the history when the watchers connect.
async fn replay_bench(watchers: usize, events: usize) -> Figure {
    let server = ApiServer::builder()
        .history_limit(events)
        .start()
        .await
        .expect("server");
    let rv = server.resource_version();
    server
        .create_many((0..events).map(|i| cm(&format!("e-{i:07}"))))
        .expect("write");
    let cpu = cpu_time();
    let start = Instant::now();
    let handles: Vec<_> = (0..watchers)
        .map(|_| tokio::spawn(watcher(server.addr(), rv, events)))
        .collect();
    let mut received = 0;
    for h in handles {
        received += h.await.expect("join");
    }
    let elapsed = start.elapsed();
    let cpu_us = cpu_us_per(received, cpu);
    println!(
        "watch delivery: {watchers} watcher(s) x {events} small objects from history: {received} \
         delivered in {:.0} ms = {:.0} events/s in total, {:.0} events/s per watcher{}",
        elapsed.as_secs_f64() * 1e3,
        received as f64 / elapsed.as_secs_f64(),
        events as f64 / elapsed.as_secs_f64(),
        cpu_text(cpu_us),
    );
    teardown(server).await;
    Figure {
        rate: received as f64 / elapsed.as_secs_f64(),
        cpu_us,
    }
}

/// The median of some numbers (None when there are none).
fn median(mut v: Vec<f64>) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    match v.len() {
        0 => None,
        n if n % 2 == 1 => v.get(mid).copied(),
        _ => Some((v.get(mid - 1)? + v.get(mid)?) / 2.0),
    }
}

/// Prints the median (and range) of a scenario's repeated runs.
fn summarize(name: &str, unit: &str, figures: &[Figure]) {
    let rates: Vec<f64> = figures.iter().map(|f| f.rate).collect();
    let cpus: Vec<f64> = figures.iter().filter_map(|f| f.cpu_us).collect();
    let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = rates.iter().copied().fold(0.0, f64::max);
    if let Some(m) = median(rates) {
        println!(
            "{name}: median of {} runs {m:.0} {unit} (range {lo:.0}..{hi:.0}){}",
            figures.len(),
            cpu_text(median(cpus)),
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; under `cargo test --all-targets` there is nothing to time.
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "apiserver-sim throughput bench: run it with `cargo bench -p kube-rt-apiserver-sim`"
        );
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    // Some scenarios only, for profiling and repeated measurements:
    // SIM_BENCH_ONLY=<name>[,<name>...]; SIM_BENCH_RUNS=<n> runs each n times and ends with
    // the medians (the shared machines these run on swing by a third between minutes).
    let only = std::env::var("SIM_BENCH_ONLY").unwrap_or_default();
    let runs: usize = std::env::var("SIM_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1);
    rt.block_on(async {
        let all = only.is_empty();
        let run = |name: &str| all || only.split(',').any(|o| o == name);
        let mut results: Vec<(&str, &str, Vec<Figure>)> = Vec::new();
        let mut record = |name: &'static str, unit: &'static str, figure: Figure| match results
            .iter_mut()
            .find(|(n, _, _)| *n == name)
        {
            Some((_, _, figures)) => figures.push(figure),
            None => results.push((name, unit, vec![figure])),
        };
        for _ in 0..runs {
            if run("list") {
                record("list", "objects/s", list_bench(10_000, 5).await);
            }
            if run("pods") {
                pods_bench(100_000).await;
            }
            if run("replay1") {
                record("replay1", "events/s", replay_bench(1, 200_000).await);
            }
            if run("replay10") {
                let f = replay_bench(10, 100_000).await;
                record("replay10", "events/s in total", f);
            }
            if run("writes") {
                let f = fanout_bench(0, 200_000, Writes::Single).await;
                record("writes", "writes/s", f);
            }
            if run("live1") {
                let f = fanout_bench(1, 200_000, Writes::Single).await;
                record("live1", "events/s", f);
            }
            if run("live10") {
                let f = fanout_bench(10, 100_000, Writes::Single).await;
                record("live10", "events/s in total", f);
            }
            if run("batch0") {
                let f = fanout_bench(0, 200_000, Writes::Batch).await;
                record("batch0", "writes/s", f);
            }
            if run("batch1") {
                let f = fanout_bench(1, 200_000, Writes::Batch).await;
                record("batch1", "events/s", f);
            }
            if run("batch10") {
                let f = fanout_bench(10, 100_000, Writes::Batch).await;
                record("batch10", "events/s in total", f);
            }
        }
        if runs > 1 {
            for (name, unit, figures) in &results {
                summarize(name, unit, figures);
            }
        }
    });
}
