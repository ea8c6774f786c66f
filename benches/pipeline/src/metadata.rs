//! `metadata`: the metadata-only caches. On one fixture (pods spread over `--namespaces`
//! namespaces, served as `PartialObjectMetadata` to metadata requests), in turns and each in a
//! fresh process: our full informer (as is and with managedFields stripped), our metadata
//! informer, kube-runtime's metadata watcher
//! (cluster-wide), then both metadata caches as one cache per namespace, then both metadata
//! caches with managedFields stripped. Bytes per cached object and the initial sync rate of
//! each, their medians over the rounds, and the ratios the goals are stated in. Every run must
//! have cached every pod.

use anyhow::{Result, ensure};
use serde::Serialize;

use crate::compare::median;
use crate::measure::{RunFigures, RunOptions, in_fresh_process, run_args};

/// One cache configuration's medians.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Which cache (`ours`, `ours-metadata`, `kube-runtime-metadata`).
    pub peer: String,
    /// One cache per namespace (else one cluster-wide cache).
    pub per_namespace: bool,
    /// managedFields stripped before caching.
    pub stripped: bool,
    /// (RSS synced − RSS before) ÷ pods.
    pub bytes_per_object: f64,
    /// The same after `malloc_trim`.
    pub bytes_per_object_trimmed: f64,
    /// Pods per second from start until synced (paged lists).
    pub sync_objects_per_s: f64,
    /// Pods cached once synced (the same in every round; the run fails otherwise).
    pub objects_synced: usize,
}

/// The rows and the ratios.
#[derive(Debug, Serialize)]
pub struct MetadataFigures {
    /// Pods in the fixture.
    pub objects: usize,
    /// Namespaces they are spread over.
    pub namespaces: usize,
    /// Rounds run.
    pub rounds: usize,
    /// Our full informer, cluster-wide.
    pub ours_full: Row,
    /// Our full informer, managedFields stripped (the manager's default).
    pub ours_full_stripped: Row,
    /// Our metadata informer, cluster-wide.
    pub ours_metadata: Row,
    /// kube-runtime's metadata watcher, cluster-wide.
    pub kube_metadata: Row,
    /// Our metadata informers, one per namespace.
    pub ours_metadata_per_namespace: Row,
    /// kube-runtime's metadata watchers, one per namespace.
    pub kube_metadata_per_namespace: Row,
    /// Our metadata informer, managedFields stripped.
    pub ours_metadata_stripped: Row,
    /// kube-runtime's metadata watcher, managedFields stripped.
    pub kube_metadata_stripped: Row,
    /// Bytes per object: our metadata cache ÷ our full cache (goal ≤ 0.125).
    pub metadata_vs_full: f64,
    /// Bytes per object: our metadata cache ÷ our full cache, both stripped.
    pub stripped_metadata_vs_stripped_full: f64,
    /// Bytes per object: our stripped metadata cache ÷ our full cache as is.
    pub stripped_metadata_vs_full: f64,
    /// Bytes per object: ours ÷ kube-runtime's, metadata caches (goal < 1).
    pub metadata_bytes_vs_kube: f64,
    /// Sync rate: ours ÷ kube-runtime's, metadata caches.
    pub metadata_sync_vs_kube: f64,
    /// Bytes per object: ours ÷ kube-runtime's, one metadata cache per namespace.
    pub per_namespace_bytes_vs_kube: f64,
    /// Sync rate: ours ÷ kube-runtime's, one metadata cache per namespace.
    pub per_namespace_sync_vs_kube: f64,
    /// Bytes per object: ours per namespace ÷ ours cluster-wide.
    pub ours_per_namespace_vs_cluster_bytes: f64,
    /// Sync rate: ours per namespace ÷ ours cluster-wide.
    pub ours_per_namespace_vs_cluster_sync: f64,
    /// Bytes per object: ours ÷ kube-runtime's, metadata caches, managedFields stripped.
    pub stripped_bytes_vs_kube: f64,
}

/// The configurations measured, in the order of each round.
const CONFIGS: [(&str, bool, bool); 8] = [
    ("ours", false, false),
    ("ours", false, true),
    ("ours-metadata", false, false),
    ("kube-runtime-metadata", false, false),
    ("ours-metadata", true, false),
    ("kube-runtime-metadata", true, false),
    ("ours-metadata", false, true),
    ("kube-runtime-metadata", false, true),
];

/// Runs `rounds` rounds of every configuration.
pub fn run(objects: usize, namespaces: usize, rounds: usize) -> Result<MetadataFigures> {
    let rounds = rounds.max(1);
    let mut runs: Vec<Vec<RunFigures>> = vec![Vec::new(); CONFIGS.len()];
    for round in 0..rounds {
        eprintln!("metadata: round {} of {rounds}", round + 1);
        for (slot, &(peer, per_namespace, stripped)) in runs.iter_mut().zip(&CONFIGS) {
            let options = RunOptions {
                objects,
                events: 0,
                stream: false,
                strip_managed_fields: stripped,
                compact_objects: false,
                relist: false,
                page_size: None,
                namespaces,
                per_namespace,
                fifo: None,
                pop_batch: None,
                readers: 0,
            };
            let figures: RunFigures = in_fresh_process(&run_args(peer, &options))?;
            ensure!(
                figures.objects_synced == objects,
                "{peer} (per namespace: {per_namespace}) cached {} of {objects} pods",
                figures.objects_synced
            );
            slot.push(figures);
        }
    }
    let rows: Vec<Row> = runs
        .iter()
        .zip(&CONFIGS)
        .map(|(runs, &(peer, per_namespace, stripped))| Row {
            peer: peer.to_owned(),
            per_namespace,
            stripped,
            bytes_per_object: median(runs.iter().map(|r| r.bytes_per_object)),
            bytes_per_object_trimmed: median(runs.iter().map(|r| r.bytes_per_object_trimmed)),
            sync_objects_per_s: median(runs.iter().map(|r| r.sync_objects_per_s)),
            objects_synced: objects,
        })
        .collect();
    let [
        full,
        full_stripped,
        ours,
        kube,
        ours_ns,
        kube_ns,
        ours_stripped,
        kube_stripped,
    ] = <[Row; 8]>::try_from(rows).map_err(|_| anyhow::anyhow!("one row per configuration"))?;
    Ok(MetadataFigures {
        objects,
        namespaces,
        rounds,
        metadata_vs_full: ours.bytes_per_object / full.bytes_per_object,
        stripped_metadata_vs_stripped_full: ours_stripped.bytes_per_object
            / full_stripped.bytes_per_object,
        stripped_metadata_vs_full: ours_stripped.bytes_per_object / full.bytes_per_object,
        metadata_bytes_vs_kube: ours.bytes_per_object / kube.bytes_per_object,
        metadata_sync_vs_kube: ours.sync_objects_per_s / kube.sync_objects_per_s,
        per_namespace_bytes_vs_kube: ours_ns.bytes_per_object / kube_ns.bytes_per_object,
        per_namespace_sync_vs_kube: ours_ns.sync_objects_per_s / kube_ns.sync_objects_per_s,
        ours_per_namespace_vs_cluster_bytes: ours_ns.bytes_per_object / ours.bytes_per_object,
        ours_per_namespace_vs_cluster_sync: ours_ns.sync_objects_per_s / ours.sync_objects_per_s,
        stripped_bytes_vs_kube: ours_stripped.bytes_per_object / kube_stripped.bytes_per_object,
        ours_full: full,
        ours_full_stripped: full_stripped,
        ours_metadata: ours,
        kube_metadata: kube,
        ours_metadata_per_namespace: ours_ns,
        kube_metadata_per_namespace: kube_ns,
        ours_metadata_stripped: ours_stripped,
        kube_metadata_stripped: kube_stripped,
    })
}

/// One human line.
pub fn describe(f: &MetadataFigures) -> String {
    format!(
        "{} pods in {} namespaces, median of {} rounds: B/pod full {:.0} (stripped {:.0}), metadata ours {:.0} ({:.3}× full, {:.2}× kube {:.0}); sync ours {:.0}/s, kube {:.0}/s ({:.2}×); per namespace: B/pod ours {:.0}, kube {:.0} ({:.2}×), sync ours {:.0}/s, kube {:.0}/s ({:.2}×); stripped: B/pod ours {:.0} ({:.3}× full stripped, {:.3}× full), kube {:.0} ({:.2}×)",
        f.objects,
        f.namespaces,
        f.rounds,
        f.ours_full.bytes_per_object,
        f.ours_full_stripped.bytes_per_object,
        f.ours_metadata.bytes_per_object,
        f.metadata_vs_full,
        f.metadata_bytes_vs_kube,
        f.kube_metadata.bytes_per_object,
        f.ours_metadata.sync_objects_per_s,
        f.kube_metadata.sync_objects_per_s,
        f.metadata_sync_vs_kube,
        f.ours_metadata_per_namespace.bytes_per_object,
        f.kube_metadata_per_namespace.bytes_per_object,
        f.per_namespace_bytes_vs_kube,
        f.ours_metadata_per_namespace.sync_objects_per_s,
        f.kube_metadata_per_namespace.sync_objects_per_s,
        f.per_namespace_sync_vs_kube,
        f.ours_metadata_stripped.bytes_per_object,
        f.stripped_metadata_vs_stripped_full,
        f.stripped_metadata_vs_full,
        f.kube_metadata_stripped.bytes_per_object,
        f.stripped_bytes_vs_kube,
    )
}
