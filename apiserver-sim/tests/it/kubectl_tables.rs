//! kubectl 1.32 prints the server's tables: the columns of each kind's printer (Kubernetes
//! `pkg/printers/internalversion/printers.go`), the wide columns with `-o wide`, a CRD's
//! printer columns, and rows of a watch. Skipped (with a notice) without `kubectl`.

use crate::common;
use crate::tables_custom::{install, printer_columns, widget};

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use apiserver_sim::ApiServer;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

struct Kubectl {
    _dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    cache: PathBuf,
}

impl Kubectl {
    fn new(server: &ApiServer) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let kubeconfig = dir.path().join("kubeconfig");
        server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
        let cache = dir.path().join("cache");
        Self {
            _dir: dir,
            kubeconfig,
            cache,
        }
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("kubectl");
        c.args(args)
            .arg("--request-timeout=30s")
            .env("KUBECONFIG", &self.kubeconfig)
            .env("KUBECACHEDIR", &self.cache);
        c
    }

    /// Runs kubectl to completion (off the async runtime); returns stdout, asserting success.
    async fn run(&self, args: &[&str]) -> String {
        let mut cmd = self.command(args);
        let out = tokio::task::spawn_blocking(move || cmd.output().expect("run kubectl"))
            .await
            .expect("join");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        stdout
    }
}

/// The whitespace-separated words of the line starting with `first`.
fn words(out: &str, first: &str) -> Vec<String> {
    out.lines()
        .find(|l| l.split_whitespace().next() == Some(first))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .unwrap_or_else(|| panic!("no line starting with {first} in:\n{out}"))
}

/// The cells of the row starting with `first`, cut at the header's column offsets (blank
/// cells kept); header names must be single words.
fn aligned(out: &str, first: &str) -> Vec<String> {
    let mut lines = out.lines();
    let header = lines.next().unwrap_or_default();
    let mut starts: Vec<usize> = header
        .char_indices()
        .filter(|(i, c)| !c.is_whitespace() && (*i == 0 || header[..*i].ends_with(' ')))
        .map(|(i, _)| i)
        .collect();
    let row = lines
        .find(|l| l.split_whitespace().next() == Some(first))
        .unwrap_or_else(|| panic!("no row {first} in:\n{out}"));
    starts.push(usize::MAX);
    starts
        .windows(2)
        .map(|w| {
            row.get(w[0]..w[1].min(row.len()))
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect()
}

async fn seed(server: &ApiServer) {
    server
        .create_json(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "default"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}], "nodeName": "node-1"}}))
        .expect("pod");
    let pods: Api<Pod> = Api::default_namespaced(server.client().expect("client"));
    pods.patch_status("web-0", &PatchParams::default(), &Patch::Merge(json!({"status": {
        "phase": "Running", "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}],
        "conditions": [{"type": "Ready", "status": "True"}],
        "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": "nginx", "imageID": "",
            "started": true, "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}]}})))
        .await
        .expect("pod status");
    server
        .create_json(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}}))
        .expect("deployment");
    let deps: Api<Deployment> = Api::default_namespaced(server.client().expect("client"));
    deps.patch_status(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"status":
        {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1}})),
    )
    .await
    .expect("deployment status");
    server
        .create_json(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg", "namespace": "default"},
            "data": {"a": "1", "b": "2", "c": "3"}}))
        .expect("cm");
}

/// `kubectl get` of pods, deployments, configmaps and a custom resource prints the columns
/// and cells the server computed; `-o wide` adds the priority-1 columns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_prints_server_tables() {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl table test");
        return;
    }
    let server = common::server().await;
    seed(&server).await;
    let k = Kubectl::new(&server);

    let out = k.run(&["get", "pods"]).await;
    assert_eq!(
        words(&out, "NAME"),
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{out}"
    );
    assert_eq!(
        &words(&out, "web-0")[..4],
        ["web-0", "1/1", "Running", "0"],
        "{out}"
    );
    let out = k.run(&["get", "pods", "-o", "wide"]).await;
    assert_eq!(
        words(&out, "NAME"),
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED",
            "NODE",
            "READINESS",
            "GATES"
        ],
        "{out}"
    );
    assert_eq!(
        &words(&out, "web-0")[5..],
        ["10.1.2.3", "node-1", "<none>", "<none>"],
        "{out}"
    );

    // With every namespace, kubectl adds the NAMESPACE column from each row's metadata.
    let out = k.run(&["get", "pods", "-A"]).await;
    assert_eq!(
        words(&out, "NAMESPACE"),
        ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"],
        "{out}"
    );
    assert_eq!(
        &words(&out, "default")[..3],
        ["default", "web-0", "1/1"],
        "{out}"
    );

    let out = k.run(&["get", "deployments"]).await;
    assert_eq!(
        words(&out, "NAME"),
        ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
        "{out}"
    );
    assert_eq!(&words(&out, "web")[..4], ["web", "1/2", "2", "1"], "{out}");
    let out = k.run(&["get", "deploy", "-o", "wide"]).await;
    assert_eq!(
        &words(&out, "web")[5..],
        ["app", "nginx", "app=web"],
        "{out}"
    );

    let out = k.run(&["get", "cm"]).await;
    assert_eq!(words(&out, "NAME"), ["NAME", "DATA", "AGE"], "{out}");
    assert_eq!(&words(&out, "cfg")[..2], ["cfg", "3"], "{out}");

    install(&server, printer_columns()).await;
    server
        .create_json(widget(
            "w1",
            json!({"replicas": 2, "ratio": 0.5, "paused": false, "size": "L"}),
            json!({}),
        ))
        .expect("widget");
    let out = k.run(&["get", "crd"]).await;
    assert_eq!(words(&out, "NAME"), ["NAME", "CREATED", "AT"], "{out}");
    assert_eq!(words(&out, "widgets.example.com").len(), 2, "{out}");
    let out = k.run(&["get", "widgets"]).await;
    assert_eq!(
        words(&out, "NAME"),
        [
            "NAME", "REPLICAS", "READY", "RATIO", "PAUSED", "BUILT", "AGE"
        ],
        "{out}"
    );
    // kubectl leaves a null cell (a path selecting nothing) blank.
    let row = aligned(&out, "w1");
    assert_eq!(
        row.get(..6).map(<[String]>::to_vec).unwrap_or_default(),
        ["w1", "2", "", "0.5", "false", ""],
        "{out}"
    );
    let out = k.run(&["get", "widgets", "-o", "wide"]).await;
    assert_eq!(
        words(&out, "NAME"),
        [
            "NAME", "REPLICAS", "READY", "RATIO", "PAUSED", "SIZE", "BUILT", "AGE"
        ],
        "{out}"
    );
    assert_eq!(
        aligned(&out, "w1").get(5).map(String::as_str),
        Some("L"),
        "{out}"
    );
}

/// `kubectl get cm -w` prints the listed rows, then a row per watch event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_watch_prints_rows() {
    if !testkit::kubectl::installed() {
        eprintln!("NOTICE: kubectl not found on PATH; skipping the kubectl watch table test");
        return;
    }
    let server = common::server().await;
    seed(&server).await;
    let k = Kubectl::new(&server);
    let mut child = k
        .command(&["get", "cm", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn kubectl get -w");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Lines up to the first containing `needle`, within 20 s.
    let until = |rx: mpsc::Receiver<String>, needle: &'static str| {
        tokio::task::spawn_blocking(move || {
            let deadline = Instant::now() + Duration::from_secs(20);
            let mut seen = Vec::new();
            while Instant::now() < deadline {
                if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
                    let hit = l.contains(needle);
                    seen.push(l);
                    if hit {
                        return (true, seen, rx);
                    }
                }
            }
            (false, seen, rx)
        })
    };
    let (found, seen, rx) = until(rx, "cfg").await.expect("join");
    assert!(found, "listing: {seen:?}");
    assert_eq!(
        seen.first()
            .map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["NAME", "DATA", "AGE"])
    );
    server
        .create_json(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "later", "namespace": "default"},
            "data": {"x": "y"}}))
        .expect("cm");
    let (found, seen, _rx) = until(rx, "later").await.expect("join");
    let _ = child.kill();
    let _ = child.wait();
    assert!(found, "watch rows: {seen:?}");
    let row = seen
        .last()
        .map(|l| l.split_whitespace().map(str::to_string).collect::<Vec<_>>())
        .unwrap_or_default();
    assert_eq!(&row[..2], ["later", "1"], "{seen:?}");
}
