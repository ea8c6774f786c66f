//! Runs every subcommand at a tiny size and checks that the figures are complete and sane
//! (every object and event arrived); never checks timings.

use std::process::Command;

use serde_json::Value;

/// Runs `pipeline-bench <args>` and returns its JSON line.
fn run(args: &[&str]) -> Value {
    let output = Command::new(env!("CARGO_BIN_EXE_pipeline-bench"))
        .args(args)
        .output()
        .expect("pipeline-bench runs");
    assert!(
        output.status.success(),
        "pipeline-bench {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().next().expect("a JSON line");
    assert!(
        stdout.lines().nth(1).is_some(),
        "a human line follows the JSON"
    );
    serde_json::from_str(line).expect("valid JSON")
}

fn positive(value: &Value, field: &str) -> f64 {
    let figure = value[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} missing in {value}"));
    assert!(
        figure > 0.0 && figure.is_finite(),
        "{field} = {figure} in {value}"
    );
    figure
}

#[test]
fn compare_runs_decode_and_both_peers_with_every_object_arriving() {
    let comparison = run(&[
        "compare",
        "--objects",
        "200",
        "--events",
        "200",
        "--rounds",
        "1",
    ]);
    for field in [
        "list_objects_per_s",
        "watch_events_per_s",
        "list_kept_objects_per_s",
        "watch_kept_events_per_s",
    ] {
        positive(&comparison["decode"], field);
    }
    for peer in ["ours", "kube_runtime"] {
        let figures = &comparison[peer];
        assert_eq!(figures["complete"], Value::Bool(true), "{peer}: {figures}");
        for field in [
            "inf_sync_objects_per_s",
            "inf_watch_events_per_s",
            "inf_stream_objects_per_s",
            "inf_relist_peak_ratio",
            "bytes_per_object",
        ] {
            positive(figures, field);
        }
    }
    for ratio in [
        "sync_vs_kube",
        "watch_vs_kube",
        "sync_vs_decode",
        "watch_vs_decode",
    ] {
        positive(&comparison, ratio);
    }
    for line in comparison["e2e"].as_array().expect("e2e lines") {
        positive(line, "p99_us");
        positive(line, "floor_p99_us");
    }
}

#[test]
fn a_run_caches_every_object_and_event() {
    let figures = run(&[
        "run",
        "--peer",
        "ours",
        "--objects",
        "200",
        "--events",
        "200",
        "--relist",
    ]);
    assert_eq!(figures["objects_synced"], 200);
    // One in twenty events adds a pod and one in twenty deletes one: the count is unchanged.
    assert_eq!(figures["objects_after_watch"], 200);
    positive(&figures, "relist_peak_ratio");
}

/// The paced workload of the latency subcommands: 400 events at 5 000/s over 200 pods.
const PACED: [&str; 6] = ["--objects", "200", "--events", "400", "--rate", "5000"];

#[test]
fn a_run_with_compact_objects_caches_every_object() {
    let figures = run(&[
        "run",
        "--peer",
        "ours",
        "--objects",
        "200",
        "--events",
        "200",
        "--compact-objects",
    ]);
    assert_eq!(figures["objects_synced"], 200);
    assert_eq!(figures["objects_after_watch"], 200);
    positive(&figures, "bytes_per_object");
}

#[test]
fn controller_reconciles_the_paced_events() {
    let figures = run(&[&["controller"], &PACED[..], &["--stages"]].concat());
    let samples = figures["samples"].as_u64().expect("samples");
    // Keys that change again while queued are reconciled once, so some events share a sample.
    assert!(
        (1..=400).contains(&samples),
        "{samples} stamped reconciles for 400 events"
    );
    positive(&figures, "p99_us");
    let to_handlers = &figures["to_handlers"];
    let handed_out = to_handlers["samples"].as_u64().expect("hand-out samples");
    // Every stamped update reaches the informer's handlers (adds and deletes are not sampled).
    assert!(
        (1..=400).contains(&handed_out),
        "{handed_out} stamped updates handed out for 400 events"
    );
    positive(to_handlers, "p99_us");
}

#[test]
fn watch_floor_decodes_every_paced_event() {
    let floor = run(&[&["watch-floor"], &PACED[..]].concat());
    assert_eq!(
        floor["samples"], 400,
        "every event is stamped and read: {floor}"
    );
    positive(&floor, "p50_us");
    positive(&floor, "p99_us");
}

#[test]
fn admission_writes_through_both_webhooks_exactly_once_each() {
    let figures = run(&[
        "admission",
        "--writes",
        "20",
        "--rounds",
        "2",
        "--concurrency",
        "2",
    ]);
    for mode in ["without_webhooks", "with_webhooks"] {
        assert_eq!(figures[mode]["writes"], 40, "{figures}");
        for field in ["writes_per_s", "median_us", "p99_us"] {
            positive(&figures[mode], field);
        }
    }
    // One validating and one mutating call per webhook write, none for the others.
    assert_eq!(figures["admission_calls"], 80, "{figures}");
    positive(&figures, "admission_round_trips_per_s");
}

#[test]
fn metadata_measures_every_cache_with_every_pod() {
    let figures = run(&[
        "metadata",
        "--objects",
        "300",
        "--namespaces",
        "3",
        "--rounds",
        "1",
    ]);
    for row in [
        "ours_full",
        "ours_full_stripped",
        "ours_metadata",
        "kube_metadata",
        "ours_metadata_per_namespace",
        "kube_metadata_per_namespace",
        "ours_metadata_stripped",
        "kube_metadata_stripped",
    ] {
        let figures = &figures[row];
        assert_eq!(figures["objects_synced"], 300, "{row}: {figures}");
        positive(figures, "sync_objects_per_s");
        positive(figures, "bytes_per_object");
    }
    for ratio in [
        "metadata_vs_full",
        "stripped_metadata_vs_stripped_full",
        "metadata_bytes_vs_kube",
        "metadata_sync_vs_kube",
        "per_namespace_sync_vs_kube",
    ] {
        positive(&figures, ratio);
    }
}

#[test]
fn metadata_caches_per_namespace_get_their_events_and_relist() {
    for peer in ["ours-metadata", "kube-runtime-metadata"] {
        let figures = run(&[
            "run",
            "--peer",
            peer,
            "--objects",
            "300",
            "--events",
            "200",
            "--namespaces",
            "3",
            "--per-namespace",
            "--relist",
        ]);
        assert_eq!(figures["objects_synced"], 300, "{peer}: {figures}");
        assert_eq!(figures["objects_after_watch"], 300, "{peer}: {figures}");
        positive(&figures, "relist_peak_ratio");
    }
}

#[test]
fn shards_reconcile_every_object_in_every_configuration() {
    let figures = run(&[
        "shards",
        "--objects",
        "200",
        "--data-bytes",
        "64",
        "--shards",
        "1,2",
        "--workers",
        "4",
        "--rounds",
        "1",
    ]);
    assert_eq!(figures["complete"], Value::Bool(true), "{figures}");
    let configurations = figures["configurations"]
        .as_array()
        .expect("configurations");
    assert_eq!(configurations.len(), 2, "{figures}");
    for (configuration, processes) in configurations.iter().zip([1_usize, 2]) {
        let shards = configuration["processes"].as_array().expect("processes");
        assert_eq!(shards.len(), processes, "{configuration}");
        let objects: u64 = shards
            .iter()
            .map(|p| p["objects"].as_u64().unwrap_or(0))
            .sum();
        let cached: u64 = shards
            .iter()
            .map(|p| p["cache_objects"].as_u64().unwrap_or(0))
            .sum();
        // Every object in exactly one shard's share and cache.
        assert_eq!(objects, 200, "{configuration}");
        assert_eq!(cached, 200, "{configuration}");
        for round in configuration["rounds"].as_array().expect("rounds") {
            assert!(round["reconciles"].as_u64() >= Some(200), "{round}");
        }
        positive(configuration, "reconciles_per_s");
        positive(configuration, "throughput_ratio");
        for process in shards {
            positive(process, "rss_mib");
        }
    }
}

#[test]
fn fresh_memory_writes_every_page_of_every_size() {
    let figures = run(&["fresh-memory", "--gib", "0.01,0.02"]);
    let points = figures["points"].as_array().expect("points");
    assert_eq!(points.len(), 2, "{figures}");
    for (point, gib) in points.iter().zip([0.01_f64, 0.02]) {
        let bytes = (gib * f64::from(1u32 << 30)) as u64;
        assert_eq!(point["bytes"], bytes);
        assert_eq!(point["pages"], bytes.div_ceil(4096));
        positive(point, "wall_per_page_us");
    }
}

#[test]
fn codecs_measure_every_encoding_and_check_every_read() {
    let figures = run(&["codecs", "--objects", "600", "--dictionary-samples", "100"]);
    assert_eq!(figures["objects"], 600);
    positive(&figures, "typed_decode_cpu_us");
    let rows = figures["encodings"].as_array().expect("encodings");
    let names: Vec<&str> = rows.iter().filter_map(|r| r["encoding"].as_str()).collect();
    assert_eq!(
        names,
        [
            "json",
            "zstd",
            "zstd-dict",
            "lz4",
            "zstd-dict",
            "protobuf",
            "protobuf"
        ]
    );
    for row in rows {
        assert_eq!(row["pods_checked"], 600, "{row}");
        positive(row, "body_bytes_per_pod");
        positive(row, "read_p99_us");
    }
    assert!(
        rows[2]["dictionary_bytes"].as_u64() > Some(0),
        "{}",
        rows[2]
    );
    let memory = figures["memory"].as_array().expect("memory");
    assert_eq!(memory.len(), 7, "{figures}");
    for row in memory {
        assert_eq!(row["objects"], 600, "{row}");
    }
}

#[test]
fn compare_storage_runs_both_storages_and_kube_runtime_with_every_object_arriving() {
    let comparison = run(&[
        "compare-storage",
        "--objects",
        "200",
        "--events",
        "200",
        "--rounds",
        "1",
    ]);
    assert_eq!(comparison["complete"], Value::Bool(true), "{comparison}");
    for peer in ["typed", "compact", "kube_runtime"] {
        let figures = &comparison[peer];
        assert_eq!(figures["complete"], Value::Bool(true), "{peer}: {figures}");
        for field in [
            "inf_sync_objects_per_s",
            "inf_watch_events_per_s",
            "inf_stream_objects_per_s",
            "bytes_per_object",
        ] {
            positive(figures, field);
        }
    }
    for storage in ["typed_ratios", "compact_ratios"] {
        for ratio in ["bytes_vs_kube", "sync_vs_decode", "watch_vs_kube"] {
            positive(&comparison[storage], ratio);
        }
    }
}

#[test]
fn storage_cpu_runs_a_controller_on_both_storages_reading_every_object() {
    let figures = run(&[
        "storage-cpu",
        "--objects",
        "300",
        "--events",
        "300",
        "--rounds",
        "1",
    ]);
    let runs = figures["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    for run in runs {
        let reconciles = run["reconciles"].as_u64().expect("reconciles");
        assert!(reconciles >= 300, "{run}");
        let deleted = run["deleted"].as_u64().expect("deleted");
        assert_eq!(
            run["reads"].as_u64(),
            Some(reconciles * 3 - deleted),
            "{run}"
        );
        positive(run, "cpu_s");
    }
    positive(&figures, "compact_vs_typed_cpu");
}

#[test]
fn scaling_measures_every_peer_at_every_size_and_draws_both_plots() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (svg, memory_svg) = (
        dir.path().join("scaling.svg"),
        dir.path().join("memory.svg"),
    );
    let figures = run(&[
        "scaling",
        "--sizes",
        "100,200",
        "--events",
        "20",
        "--svg",
        svg.to_str().expect("a UTF-8 path"),
        "--memory-svg",
        memory_svg.to_str().expect("a UTF-8 path"),
    ]);
    let points = figures["points"].as_array().expect("points");
    assert_eq!(points.len(), 8, "four peers at two sizes: {figures}");
    for point in points {
        positive(point, "sync_objects_per_s");
    }
    for plot in [&svg, &memory_svg] {
        let drawn = std::fs::read_to_string(plot).expect("the plot was written");
        assert!(drawn.contains("ours-compact"), "{}", plot.display());
    }
}

#[test]
fn fifos_measure_the_compact_informer_on_both_fifos_and_batches() {
    let figures = run(&[
        "fifos",
        "--objects",
        "200",
        "--events",
        "200",
        "--rounds",
        "1",
        "--compact",
    ]);
    assert_eq!(figures["peer"], "ours-compact", "{figures}");
    let rows = figures["rows"].as_array().expect("rows");
    assert_eq!(
        rows.len(),
        4,
        "two fifos, batches and single pops: {figures}"
    );
    for row in rows {
        positive(row, "median_sync_objects_per_s");
        positive(row, "median_watch_events_per_s");
    }
}
