//! The memory rows of `codecs`: every fixture pod decoded into an `Indexer` (namespace index)
//! in a fresh process, typed (`Indexer<Pod>`) or compact (`Indexer<Compact<Pod>>` through the
//! codec), and the RSS it added per pod: everything the cache holds, metadata, keys and index
//! included.

use std::sync::Arc;

use anyhow::{Result, ensure};
use indexer::compact::{Codec, Compact};
use indexer::{Indexer, Indexers, Store};
use k8s_openapi::api::core::v1::Pod;
use serde::{Deserialize, Serialize};

use super::{EncodingName, Tuning};
use crate::fixtures::{DEFAULT_NAMESPACES, Fixture};
use crate::measure::in_fresh_process;
use crate::memory;

/// One cache configuration's bytes per pod.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MemoryRow {
    /// `typed` or the compact encoding.
    pub cache: String,
    /// Whether managedFields were kept.
    pub managed_fields_kept: bool,
    /// (RSS with the cache − RSS before) ÷ pods.
    pub bytes_per_pod: f64,
    /// The same after `malloc_trim` (freed decode buffers returned).
    pub bytes_per_pod_trimmed: f64,
    /// Pods cached (the run fails unless every pod is).
    pub objects: usize,
}

/// The caches measured: typed and each encoding, managedFields kept and dropped.
pub fn configurations() -> Vec<(Option<EncodingName>, bool)> {
    let mut out = vec![(None, true), (None, false)];
    for encoding in [
        EncodingName::Json,
        EncodingName::Zstd,
        EncodingName::ZstdDict,
        EncodingName::Lz4,
    ] {
        out.push((Some(encoding), false));
    }
    out.push((Some(EncodingName::ZstdDict), true));
    out
}

/// Measures one configuration in a fresh process.
pub fn in_fresh(
    objects: usize,
    encoding: Option<EncodingName>,
    keep: bool,
    tuning: &Tuning,
) -> Result<MemoryRow> {
    let mut args = vec![
        "codec-memory".to_owned(),
        "--objects".to_owned(),
        objects.to_string(),
        "--level".to_owned(),
        tuning.level.to_string(),
        "--dictionary-samples".to_owned(),
        tuning.dictionary_samples.to_string(),
        "--dictionary-bytes".to_owned(),
        tuning.dictionary_bytes.to_string(),
    ];
    if let Some(encoding) = encoding {
        args.extend(["--encoding".to_owned(), encoding.name().to_owned()]);
    }
    if keep {
        args.push("--keep-managed-fields".to_owned());
    }
    let row: MemoryRow = in_fresh_process(&args)?;
    ensure!(
        row.objects == objects,
        "{} of {objects} pods cached",
        row.objects
    );
    Ok(row)
}

/// The measurement itself, in this process.
pub fn run(
    objects: usize,
    encoding: Option<EncodingName>,
    keep: bool,
    tuning: &Tuning,
) -> Result<MemoryRow> {
    let fixture = Fixture::build(objects, 0, DEFAULT_NAMESPACES)?;
    memory::trim();
    let before = memory::read()?;
    let (cached, keep_alive) = match encoding {
        None => {
            let cache: Indexer<Pod> = Indexer::new(Indexers::new().with_namespace());
            for bytes in &fixture.pods {
                let mut pod: Pod = serde_json::from_slice(bytes)?;
                if !keep {
                    pod.metadata.managed_fields = None;
                }
                cache.add(Arc::new(pod))?;
            }
            (cache.len(), Box::new(cache) as Box<dyn std::any::Any>)
        }
        Some(encoding) => {
            let codec = Codec::new(super::encodings::options(encoding, keep, tuning));
            let cache: Indexer<Compact<Pod>> = Indexer::new(Indexers::new().with_namespace());
            for bytes in &fixture.pods {
                let obj = serde_json::from_slice::<Compact<Pod>>(bytes)?;
                cache.add(codec.encode(Arc::new(obj)))?;
            }
            (
                cache.len(),
                Box::new((cache, codec)) as Box<dyn std::any::Any>,
            )
        }
    };
    ensure!(cached == objects, "cached {cached} of {objects} pods");
    let with_cache = memory::read()?;
    memory::trim();
    let trimmed = memory::read()?;
    drop(keep_alive);
    let per_pod = |rss: u64| rss.saturating_sub(before.rss) as f64 / objects as f64;
    Ok(MemoryRow {
        cache: encoding.map_or("typed", EncodingName::name).to_owned(),
        managed_fields_kept: keep,
        bytes_per_pod: per_pod(with_cache.rss),
        bytes_per_pod_trimmed: per_pod(trimmed.rss),
        objects: cached,
    })
}
