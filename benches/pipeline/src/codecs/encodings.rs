//! The CPU rows of `codecs`: for each encoding, over every fixture pod, the stored body's
//! size, the codec's encode CPU, the decode CPU of reads and the wall time of single reads; then
//! every read checked against the typed decoding of the same bytes.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use bytes::Bytes;
use indexer::compact::{Codec, CodecOptions, Compact, DictionaryState, Encoding};
use k8s_openapi::api::core::v1::Pod;
use prost::Message;
use serde::Serialize;

use super::EncodingName;
use crate::controller::percentile;
use crate::cpu;

/// One encoding's figures.
#[derive(Debug, Clone, Serialize)]
pub struct EncodingRow {
    /// The encoding.
    pub encoding: EncodingName,
    /// Whether managedFields were kept in the stored bodies.
    pub managed_fields_kept: bool,
    /// Stored bytes per pod: the encoded body alone.
    pub body_bytes_per_pod: f64,
    /// CPU µs per pod to encode (strip and compress) a captured pod.
    pub encode_cpu_us: f64,
    /// CPU µs per pod to decode a stored pod into a typed Pod.
    pub decode_cpu_us: f64,
    /// Wall µs of one read (decode), median and 99th percentile over every pod.
    pub read_p50_us: f64,
    /// See `read_p50_us`.
    pub read_p99_us: f64,
    /// The trained dictionary's size (zstd-dict).
    pub dictionary_bytes: Option<usize>,
    /// How long training took (zstd-dict).
    pub training_ms: Option<f64>,
    /// Pods whose read was checked equal to the typed decoding (every pod).
    pub pods_checked: usize,
}

/// The codec options of an encoding.
pub fn options(encoding: EncodingName, keep: bool, tuning: &super::Tuning) -> CodecOptions {
    let options = CodecOptions::new()
        .keep_managed_fields(keep)
        .level(tuning.level)
        .dictionary(tuning.dictionary_samples, tuning.dictionary_bytes);
    match encoding {
        EncodingName::Json => options.encoding(Encoding::Json),
        EncodingName::Zstd => options.encoding(Encoding::Zstd),
        EncodingName::ZstdDict => options.encoding(Encoding::ZstdDictionary),
        EncodingName::Lz4 => options.encoding(Encoding::Lz4),
        // Not a codec of the indexer: measured by `protobuf_row`.
        EncodingName::Protobuf => options,
    }
}

fn capture(pods: &[Bytes]) -> Result<Vec<Arc<Compact<Pod>>>> {
    pods.iter()
        .map(|bytes| Ok(Arc::new(serde_json::from_slice::<Compact<Pod>>(bytes)?)))
        .collect()
}

/// The figures of one encoding of the indexer's codec.
pub fn codec_row(
    pods: &[Bytes],
    encoding: EncodingName,
    keep: bool,
    tuning: &super::Tuning,
) -> Result<EncodingRow> {
    let codec = Codec::new(options(encoding, keep, tuning));
    let captured = capture(pods)?;
    let mut training_ms = None;
    if encoding == EncodingName::ZstdDict {
        let started = Instant::now();
        for obj in captured.iter().take(tuning.dictionary_samples) {
            drop(codec.encode(Arc::clone(obj)));
        }
        training_ms = Some(started.elapsed().as_secs_f64() * 1e3);
    }
    let dictionary_bytes = match codec.dictionary_state() {
        DictionaryState::Trained { bytes } => Some(bytes),
        DictionaryState::Unused => None,
        other => anyhow::bail!("the dictionary did not train: {other:?}"),
    };

    let before = cpu::thread()?;
    let stored: Vec<Arc<Compact<Pod>>> =
        captured.into_iter().map(|obj| codec.encode(obj)).collect();
    let encode = cpu::thread()?.saturating_sub(before);
    let body_bytes: usize = stored.iter().map(|obj| obj.encoded_len()).sum();

    let reads = time_reads(&stored, |obj| {
        obj.decode_fresh()?;
        Ok(())
    })?;

    let mut checked = 0;
    for (obj, bytes) in stored.iter().zip(pods) {
        let mut expected: Pod = serde_json::from_slice(bytes)?;
        if !keep {
            expected.metadata.managed_fields = None;
        }
        ensure!(
            obj.decode_fresh()? == expected,
            "{encoding:?}: pod {checked} reads back differently"
        );
        checked += 1;
    }
    let mut row = row(
        encoding,
        keep,
        checked,
        pods.len(),
        body_bytes,
        encode,
        reads,
    )?;
    row.dictionary_bytes = dictionary_bytes;
    row.training_ms = training_ms;
    Ok(row)
}

/// The protobuf row: k8s-pb Pods encoded and decoded with prost (see `protobuf.rs`).
pub fn protobuf_row(pods: &[Bytes], keep: bool) -> Result<EncodingRow> {
    let messages = pods
        .iter()
        .map(|bytes| {
            let mut pod: Pod = serde_json::from_slice(bytes)?;
            if !keep {
                pod.metadata.managed_fields = None;
            }
            Ok(super::protobuf::pod(&pod))
        })
        .collect::<Result<Vec<_>>>()?;
    let before = cpu::thread()?;
    let encoded: Vec<Vec<u8>> = messages.iter().map(Message::encode_to_vec).collect();
    let encode = cpu::thread()?.saturating_sub(before);
    let body_bytes: usize = encoded.iter().map(Vec::len).sum();

    let reads = time_reads(&encoded, |bytes| {
        k8s_pb::api::core::v1::Pod::decode(bytes.as_slice())?;
        Ok(())
    })?;

    let mut checked = 0;
    for (bytes, message) in encoded.iter().zip(&messages) {
        ensure!(
            k8s_pb::api::core::v1::Pod::decode(bytes.as_slice())? == *message,
            "protobuf pod {checked} differs"
        );
        checked += 1;
    }
    row(
        EncodingName::Protobuf,
        keep,
        checked,
        pods.len(),
        body_bytes,
        encode,
        reads,
    )
}

/// The reads of every stored item: the CPU they took together, and each one's wall time (µs),
/// sorted.
struct Reads {
    cpu: Duration,
    wall_us: Vec<f64>,
}

fn time_reads<T>(stored: &[T], read: impl Fn(&T) -> Result<()>) -> Result<Reads> {
    let mut wall_us = Vec::with_capacity(stored.len());
    let before = cpu::thread()?;
    for item in stored {
        let started = Instant::now();
        read(item)?;
        wall_us.push(started.elapsed().as_secs_f64() * 1e6);
    }
    let cpu = cpu::thread()?.saturating_sub(before);
    wall_us.sort_by(f64::total_cmp);
    Ok(Reads { cpu, wall_us })
}

/// A row's figures per pod, once every one of the `pods` was checked.
fn row(
    encoding: EncodingName,
    keep: bool,
    checked: usize,
    pods: usize,
    body_bytes: usize,
    encode: Duration,
    reads: Reads,
) -> Result<EncodingRow> {
    ensure!(checked == pods, "checked {checked} of {pods} pods");
    let n = pods as f64;
    Ok(EncodingRow {
        encoding,
        managed_fields_kept: keep,
        body_bytes_per_pod: body_bytes as f64 / n,
        encode_cpu_us: encode.as_secs_f64() * 1e6 / n,
        decode_cpu_us: reads.cpu.as_secs_f64() * 1e6 / n,
        read_p50_us: percentile(&reads.wall_us, 0.5),
        read_p99_us: percentile(&reads.wall_us, 0.99),
        dictionary_bytes: None,
        training_ms: None,
        pods_checked: checked,
    })
}

/// CPU µs per pod of the list path's two decoders over the same bytes: the typed Pod, and the
/// compact capture (JSON kept, lean metadata parsed).
pub fn decode_costs(pods: &[Bytes]) -> Result<(f64, f64)> {
    let n = pods.len() as f64;
    let before = cpu::thread()?;
    for bytes in pods {
        drop(serde_json::from_slice::<Pod>(bytes)?);
    }
    let typed = cpu::thread()?.saturating_sub(before).as_secs_f64() * 1e6 / n;
    let before = cpu::thread()?;
    for bytes in pods {
        drop(serde_json::from_slice::<Compact<Pod>>(bytes)?);
    }
    let compact = cpu::thread()?.saturating_sub(before).as_secs_f64() * 1e6 / n;
    Ok((typed, compact))
}
