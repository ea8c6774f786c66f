//! The differential fidelity suite: scripted request sequences (`scenarios/`) sent to the
//! simulator and to a real kube-apiserver, their normalized responses compared probe by probe.
//!
//! Modes, chosen by the environment:
//! - default (CI): the probes run against the simulator and are compared with the real
//!   server's normalized responses recorded in `fixtures/` (one JSON file per scenario);
//! - `KUBE_RT_TEST_KUBECONFIG=<kubeconfig>`: the probes also run against that server and the
//!   simulator is compared with it live;
//! - with `KUBE_RT_DIFF_RECORD=1` as well: the live answers are written to `fixtures/`.
//!
//! `KUBE_RT_DIFF_ONLY=<scenario>` runs one scenario; `KUBE_RT_DIFF_SIM_OUT=<file>` writes the
//! simulator's normalized answers there (to study a difference). Every difference must be listed in
//! `allowlist.yaml` with its reason; a listed probe that no longer differs fails the run too,
//! so the list stays true. Figures are printed (`cargo test ... -- --nocapture`).

mod ctx;
// The admission tests' webhook server (HTTPS with a given certificate, requests recorded).
#[path = "../it/admission/harness.rs"]
#[allow(dead_code)]
mod harness;
mod normalize;
mod scenarios;
mod target;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use target::Target;

/// The name of the environment variable naming a real cluster's kubeconfig.
const KUBECONFIG_ENV: &str = "KUBE_RT_TEST_KUBECONFIG";

fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/differential/fixtures")
}

fn run_id() -> String {
    (0..5)
        .map(|_| char::from(b'a' + fastrand::u8(0..26)))
        .collect()
}

/// A probe whose answers may differ, and why.
#[derive(serde::Deserialize)]
struct Allowed {
    probe: String,
    reason: String,
    /// The difference depends on timing the simulator shares with a real cluster (its
    /// controllers running before the probe or after), so some runs match.
    #[serde(default)]
    racy: bool,
}

/// Probe id → its allowlist entry, from `allowlist.yaml`.
fn allowlist() -> BTreeMap<String, Allowed> {
    let text = include_str!("allowlist.yaml");
    let entries: Vec<Allowed> = serde_yaml::from_str(text).expect("allowlist.yaml parses");
    entries.into_iter().map(|e| (e.probe.clone(), e)).collect()
}

fn load_fixtures(scenarios: &[&str]) -> BTreeMap<String, Value> {
    let mut all = BTreeMap::new();
    for name in scenarios {
        let path = fixtures_dir().join(format!("{name}.json"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (record it: see docs/conformance.md)",
                path.display()
            )
        });
        let mut map: BTreeMap<String, Value> = serde_json::from_str(&text).expect("fixture JSON");
        map.values_mut().for_each(normalize::order_managed_fields);
        all.extend(map);
    }
    all
}

fn write_fixtures(observed: &BTreeMap<String, Value>) {
    let mut by_scenario: BTreeMap<&str, BTreeMap<&str, &Value>> = BTreeMap::new();
    for (id, v) in observed {
        let scenario = id.split('/').next().unwrap_or_default();
        by_scenario.entry(scenario).or_default().insert(id, v);
    }
    for (scenario, probes) in by_scenario {
        let path = fixtures_dir().join(format!("{scenario}.json"));
        let mut text = serde_json::to_string_pretty(&probes).expect("serialize");
        text.push('\n');
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 1500 {
        format!("{}…", &s[..1500])
    } else {
        s
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simulator_answers_as_the_real_server() {
    let only = std::env::var("KUBE_RT_DIFF_ONLY").ok();
    let kubeconfig = std::env::var(KUBECONFIG_ENV).ok().filter(|p| !p.is_empty());
    let selected: Vec<&str> = scenarios::NAMES
        .iter()
        .copied()
        .filter(|n| only.as_deref().is_none_or(|o| o == *n))
        .filter(|n| kubeconfig.is_some() || !scenarios::PENDING.contains(n))
        .collect();
    if kubeconfig.is_none() {
        for name in scenarios::PENDING {
            println!(
                "NOTICE: scenario {name} is not recorded yet: it runs only against a live server \
                 (docs/conformance.md)"
            );
        }
    }
    let (bare, cluster): (Vec<&str>, Vec<&str>) = selected
        .iter()
        .partition(|n| !scenarios::CLUSTER.contains(n));
    let sim = Target::simulator().await.expect("simulator starts");
    let (mut observed, mut errors) = scenarios::run(&sim, &run_id(), &bare).await;
    if !cluster.is_empty() {
        let sim = Target::cluster_simulator().await.expect("simulator starts");
        let (more, more_errors) = scenarios::run(&sim, &run_id(), &cluster).await;
        observed.extend(more);
        errors.extend(more_errors);
    }
    assert!(errors.is_empty(), "simulator run broke: {errors:#?}");
    if let Ok(path) = std::env::var("KUBE_RT_DIFF_SIM_OUT") {
        let text = serde_json::to_string_pretty(&observed).expect("serialize");
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    let (reference, source) = match &kubeconfig {
        Some(path) => {
            let real = Target::real(path)
                .await
                .expect("kubeconfig of a reachable server");
            let (live, errors) = scenarios::run(&real, &run_id(), &selected).await;
            assert!(errors.is_empty(), "real server run broke: {errors:#?}");
            if std::env::var("KUBE_RT_DIFF_RECORD").is_ok_and(|v| v == "1") {
                write_fixtures(&live);
            }
            (live, "the real server (live)")
        }
        None => (load_fixtures(&selected), "the recorded fixtures"),
    };
    let allowed = allowlist();
    let (mut identical, mut allowlisted, mut failures) = (0, Vec::new(), Vec::new());
    for (id, sim_value) in &observed {
        match reference.get(id) {
            None => failures.push(format!("{id}: not recorded from a real server")),
            Some(real_value) if real_value == sim_value => {
                identical += 1;
                if allowed.get(id).is_some_and(|a| !a.racy) {
                    failures.push(format!("{id}: allowlisted but identical now: remove it"));
                }
            }
            Some(real_value) => match allowed.get(id) {
                Some(entry) => allowlisted.push((id.clone(), entry.reason.clone())),
                None => failures.push(format!(
                    "{id} differs:\n  real: {}\n  sim:  {}",
                    short(real_value),
                    short(sim_value)
                )),
            },
        }
    }
    for id in reference.keys().filter(|id| !observed.contains_key(*id)) {
        failures.push(format!("{id}: recorded but no longer probed"));
    }
    for name in scenarios::PENDING {
        if fixtures_dir().join(format!("{name}.json")).exists() {
            failures.push(format!(
                "scenario {name} is recorded now: remove it from scenarios::PENDING"
            ));
        }
    }
    let total = observed.len();
    println!("differential suite against {source}: {total} probes");
    println!(
        "  identical after normalization: {identical} ({:.1} %)",
        100.0 * identical as f64 / total.max(1) as f64
    );
    println!("  allowlisted: {}", allowlisted.len());
    for (id, reason) in &allowlisted {
        println!("    {id}: {reason}");
    }
    println!("  unexplained: {}", failures.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if only.is_none() {
        assert!(total >= 200, "only {total} probes");
    }
}

/// The lists of the `mergekeys` scenario merge on the simulator: after each probe's patch,
/// its list still has every item it had and the changed item holds the change (the few lists
/// kube-apiserver refuses to hold or change are refused).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_merge_key_list_merges_on_the_simulator() {
    let sim = Target::simulator().await.expect("simulator starts");
    let (wrong, ids) = scenarios::merge_keys::check(&sim).await;
    let probed = ids.len();
    let mut per_kind: BTreeMap<String, usize> = BTreeMap::new();
    for id in &ids {
        let kind: Vec<&str> = id.splitn(3, '/').take(2).collect();
        *per_kind.entry(kind.join("/")).or_default() += 1;
    }
    println!("merge-key lists probed on the simulator: {probed}");
    for (kind, n) in &per_kind {
        println!("  {kind}: {n}");
    }
    assert!(
        wrong.is_empty(),
        "{} of {probed} lists did not merge:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(probed >= 250, "only {probed} merge-key lists probed");
}
