//! `codecs`: the encodings of compact cached objects over the fixture's pods. Per encoding:
//! stored bytes per pod (the body alone), encode and decode CPU per pod, the wall time of single
//! reads (p50, p99), every read checked against the typed decoding of the same bytes; the CPU of
//! the list path's two decoders (typed Pod, compact capture); and bytes per cached pod, all
//! included, of `Indexer<Pod>` and `Indexer<Compact<Pod>>` in fresh processes.

mod encodings;
mod memory;
mod protobuf;
mod reads;

use anyhow::Result;
use serde::{Deserialize, Serialize};

pub use memory::MemoryRow;

use crate::fixtures::{DEFAULT_NAMESPACES, Fixture};
use encodings::EncodingRow;

/// An encoding measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum EncodingName {
    /// The minified JSON as is.
    Json,
    /// zstd per object, no dictionary.
    Zstd,
    /// zstd with a dictionary trained on the first objects.
    ZstdDict,
    /// lz4 per object.
    Lz4,
    /// Kubernetes protobuf (k8s-pb, prost).
    Protobuf,
}

impl EncodingName {
    /// The name on the command line and in the figures.
    pub fn name(self) -> &'static str {
        match self {
            EncodingName::Json => "json",
            EncodingName::Zstd => "zstd",
            EncodingName::ZstdDict => "zstd-dict",
            EncodingName::Lz4 => "lz4",
            EncodingName::Protobuf => "protobuf",
        }
    }
}

/// The codec's tuning.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct Tuning {
    /// zstd level.
    #[arg(long, default_value_t = 3)]
    pub level: i32,
    /// Objects the dictionary is trained on.
    #[arg(long, default_value_t = 1_000)]
    pub dictionary_samples: usize,
    /// The dictionary's largest size in bytes.
    #[arg(long, default_value_t = 32 * 1024)]
    pub dictionary_bytes: usize,
}

/// Every figure of a `codecs` run.
#[derive(Debug, Serialize)]
pub struct CodecsFigures {
    /// Pods in the fixture.
    pub objects: usize,
    /// Their average JSON size.
    pub average_pod_json_bytes: f64,
    /// The tuning used.
    pub level: i32,
    /// Dictionary training samples.
    pub dictionary_samples: usize,
    /// Dictionary size limit.
    pub dictionary_bytes: usize,
    /// CPU µs per pod of a typed decode (`serde_json` into `Pod`), the typed mode's list path.
    pub typed_decode_cpu_us: f64,
    /// CPU µs per pod of a compact capture (`Compact<Pod>`: JSON kept, lean metadata parsed).
    pub compact_capture_cpu_us: f64,
    /// One row per encoding (managedFields dropped), and zstd-dict with them kept.
    pub encodings: Vec<EncodingRow>,
    /// Single reads through whole caches, typed and compact (the default codec).
    pub cache_reads: reads::CacheReads,
    /// Bytes per cached pod, all included, per cache (fresh processes).
    pub memory: Vec<MemoryRow>,
}

/// Runs every measurement over `objects` fixture pods.
pub fn run(objects: usize, tuning: Tuning) -> Result<CodecsFigures> {
    let fixture = Fixture::build(objects, 0, DEFAULT_NAMESPACES)?;
    let pods = &fixture.pods;
    eprintln!("codecs: the list path's decoders");
    let (typed_decode_cpu_us, compact_capture_cpu_us) = encodings::decode_costs(pods)?;
    let mut rows = Vec::new();
    for encoding in [
        EncodingName::Json,
        EncodingName::Zstd,
        EncodingName::ZstdDict,
        EncodingName::Lz4,
    ] {
        eprintln!("codecs: {}", encoding.name());
        rows.push(encodings::codec_row(pods, encoding, false, &tuning)?);
    }
    eprintln!("codecs: zstd-dict, managedFields kept");
    rows.push(encodings::codec_row(
        pods,
        EncodingName::ZstdDict,
        true,
        &tuning,
    )?);
    eprintln!("codecs: protobuf");
    rows.push(encodings::protobuf_row(pods, false)?);
    rows.push(encodings::protobuf_row(pods, true)?);
    eprintln!("codecs: single reads through typed and compact caches");
    let cache_reads = reads::run(pods, &tuning)?;
    let average_pod_json_bytes = fixture.pod_bytes() as f64 / objects as f64;
    drop(fixture);
    let mut memory_rows = Vec::new();
    for (encoding, keep) in memory::configurations() {
        eprintln!(
            "codecs: memory of {} (managedFields kept: {keep})",
            encoding.map_or("typed", EncodingName::name)
        );
        memory_rows.push(memory::in_fresh(objects, encoding, keep, &tuning)?);
    }
    Ok(CodecsFigures {
        objects,
        average_pod_json_bytes,
        level: tuning.level,
        dictionary_samples: tuning.dictionary_samples,
        dictionary_bytes: tuning.dictionary_bytes,
        typed_decode_cpu_us,
        compact_capture_cpu_us,
        encodings: rows,
        cache_reads,
        memory: memory_rows,
    })
}

/// One memory measurement in this process (the hidden `codec-memory` subcommand).
pub fn run_memory(
    objects: usize,
    encoding: Option<EncodingName>,
    keep: bool,
    tuning: Tuning,
) -> Result<MemoryRow> {
    memory::run(objects, encoding, keep, &tuning)
}

/// The human lines.
pub fn describe(f: &CodecsFigures) -> String {
    let mut lines = vec![format!(
        "{} pods of {:.0} B JSON: typed decode {:.1} µs CPU/pod, compact capture {:.1} µs ({:.2}×)",
        f.objects,
        f.average_pod_json_bytes,
        f.typed_decode_cpu_us,
        f.compact_capture_cpu_us,
        f.compact_capture_cpu_us / f.typed_decode_cpu_us
    )];
    for r in &f.encodings {
        lines.push(format!(
            "  {:<9} managedFields {}: body {:>6.0} B/pod, encode {:>5.2} µs, decode {:>5.1} µs CPU/pod, read p50 {:.1} µs p99 {:.1} µs{}",
            r.encoding.name(),
            if r.managed_fields_kept { "kept   " } else { "dropped" },
            r.body_bytes_per_pod,
            r.encode_cpu_us,
            r.decode_cpu_us,
            r.read_p50_us,
            r.read_p99_us,
            match (r.dictionary_bytes, r.training_ms) {
                (Some(bytes), Some(ms)) => format!(", dictionary {bytes} B trained in {ms:.0} ms"),
                _ => String::new(),
            }
        ));
    }
    let r = &f.cache_reads;
    lines.push(format!(
        "  one cached pod read, {} pods: typed p50 {:.2} µs p99 {:.2} µs; compact (zstd-dict, decode included) p50 {:.1} µs p99 {:.1} µs",
        r.pods, r.typed_p50_us, r.typed_p99_us, r.compact_p50_us, r.compact_p99_us
    ));
    for m in &f.memory {
        lines.push(format!(
            "  cache {:<9} managedFields {}: {:>6.0} B/pod ({:.0} trimmed)",
            m.cache,
            if m.managed_fields_kept {
                "kept   "
            } else {
                "dropped"
            },
            m.bytes_per_pod,
            m.bytes_per_pod_trimmed
        ));
    }
    lines.join("\n")
}
