//! Single cached-pod reads through a whole cache, typed and compact: the wall time of one
//! `get_by_key` for every fixture pod, in turn on each cache (the typed cache's lookup and
//! `Arc` clone; the compact cache's lookup and decode of a pod stored by the default codec).

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use bytes::Bytes;
use indexer::compact::{Codec, Compact, CompactLister};
use indexer::{Indexer, Indexers, ObjectKey, Store, key_of};
use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use super::EncodingName;
use super::encodings::options;
use crate::controller::percentile;

/// The wall time of single reads, microseconds.
#[derive(Debug, Clone, Serialize)]
pub struct CacheReads {
    /// Pods read from each cache (every one found).
    pub pods: usize,
    /// The typed cache: median and 99th percentile.
    pub typed_p50_us: f64,
    /// See `typed_p50_us`.
    pub typed_p99_us: f64,
    /// The compact cache (decode included): median and 99th percentile.
    pub compact_p50_us: f64,
    /// See `compact_p50_us`.
    pub compact_p99_us: f64,
}

/// Caches every pod of `pods` typed and compact, then reads each one from both.
pub fn run(pods: &[Bytes], tuning: &super::Tuning) -> Result<CacheReads> {
    let typed: Indexer<Pod> = Indexer::new(Indexers::new().with_namespace());
    let compact: Indexer<Compact<Pod>> = Indexer::new(Indexers::new().with_namespace());
    let codec = Codec::new(options(EncodingName::ZstdDict, false, tuning));
    let mut keys: Vec<ObjectKey> = Vec::with_capacity(pods.len());
    for bytes in pods {
        let pod: Pod = serde_json::from_slice(bytes)?;
        keys.push(key_of(&pod)?);
        typed.add(Arc::new(pod))?;
        compact.add(codec.encode(Arc::new(serde_json::from_slice::<Compact<Pod>>(bytes)?)))?;
    }
    // Objects cached before the dictionary trained are stored anew, as a relist would.
    for bytes in pods.iter().take(tuning.dictionary_samples) {
        compact.update(codec.encode(Arc::new(serde_json::from_slice::<Compact<Pod>>(bytes)?)))?;
    }
    let lister = CompactLister::new(compact);
    let (mut typed_us, mut compact_us) = (Vec::new(), Vec::new());
    for key in &keys {
        let started = Instant::now();
        let found = typed.get_by_key(key);
        typed_us.push(started.elapsed().as_secs_f64() * 1e6);
        found.with_context(|| format!("{key} is not in the typed cache"))?;
        let started = Instant::now();
        let found = lister.get_by_key(key);
        compact_us.push(started.elapsed().as_secs_f64() * 1e6);
        ensure!(
            found.is_some(),
            "{key} does not read from the compact cache"
        );
    }
    typed_us.sort_by(f64::total_cmp);
    compact_us.sort_by(f64::total_cmp);
    Ok(CacheReads {
        pods: keys.len(),
        typed_p50_us: percentile(&typed_us, 0.50),
        typed_p99_us: percentile(&typed_us, 0.99),
        compact_p50_us: percentile(&compact_us, 0.50),
        compact_p99_us: percentile(&compact_us, 0.99),
    })
}
