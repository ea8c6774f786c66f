//! The round-trip property of compact objects (`indexer::fuzzing::check_compact_round_trip`):
//! what a read returns equals what the typed mode returns, field for field (managedFields aside
//! when dropped), over the fuzz target's checked-in seeds, generated Pods, and an example object of
//! every built-in kind (`compact_kinds`).

use std::path::PathBuf;

use indexer::fuzzing::check_compact_round_trip;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use proptest::prelude::*;

fn corpus() -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/compact_round_trip");
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .expect("the seed corpus is checked in")
        .map(|entry| {
            let path = entry.expect("a corpus entry").path();
            let bytes = std::fs::read(&path).expect("a readable seed");
            (path, bytes)
        })
        .collect();
    seeds.sort();
    seeds
}

#[test]
fn every_seed_of_the_fuzz_corpus_round_trips_as_a_pod_and_a_config_map() {
    let seeds = corpus();
    assert!(seeds.len() >= 10, "{} seeds", seeds.len());
    for (path, bytes) in &seeds {
        check_compact_round_trip::<Pod>(bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        check_compact_round_trip::<ConfigMap>(bytes)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

/// Pods with generated metadata (managedFields anywhere among the members, or none) and data.
fn pod_json() -> impl Strategy<Value = String> {
    let label = ("[a-z]{1,6}", "[a-z0-9\\-\"\\\\]{0,6}");
    (
        "[a-z][a-z0-9-]{0,20}",
        prop::option::of("[a-z]{1,8}"),
        prop::collection::btree_map(label.0, label.1, 0..4),
        prop::option::of(prop::collection::vec("[a-z]{1,8}", 0..3)),
        0usize..4,
        any::<i64>(),
        prop::bool::ANY,
    )
        .prop_map(|(name, namespace, labels, managers, managed_at, generation, spaced)| {
            let mut members = vec![
                format!("\"name\":{}", serde_json::json!(name)),
                format!("\"labels\":{}", serde_json::json!(labels)),
                format!("\"generation\":{generation}"),
                "\"annotations\":{\"a\":\"b\"}".to_owned(),
            ];
            if let Some(namespace) = namespace {
                members.push(format!("\"namespace\":{}", serde_json::json!(namespace)));
            }
            if let Some(managers) = managers {
                let entries: Vec<_> = managers
                    .iter()
                    .map(|m| serde_json::json!({"manager": m, "operation": "Update"}))
                    .collect();
                members.insert(managed_at.min(members.len()), format!("\"managedFields\":{}", serde_json::json!(entries)));
            }
            let separator = if spaced { " , " } else { "," };
            format!(
                "{{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{{{}}},\"spec\":{{\"containers\":[{{\"name\":\"c\"}}]}}}}",
                members.join(separator)
            )
        })
}

proptest! {
    #[test]
    fn generated_pods_round_trip(json in pod_json()) {
        prop_assert_eq!(check_compact_round_trip::<Pod>(json.as_bytes()), Ok(()));
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_never_read_back_differently(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        prop_assert_eq!(check_compact_round_trip::<Pod>(&bytes), Ok(()));
    }
}
