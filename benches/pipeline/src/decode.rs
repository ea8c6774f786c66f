//! The physical limit: `serde_json` decoding the served bytes into `k8s_openapi` Pods on one
//! thread, with the same wire types the clients use (`ObjectList`, `WatchEvent`); and, for
//! reference, the same event lines through the reflector's own watch-line decoder.

use std::time::Instant;

use anyhow::{Result, ensure};
use bytes::Bytes;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{ObjectList, WatchEvent};
use serde::Serialize;

use crate::cpu;
use crate::fixtures::{DEFAULT_NAMESPACES, Fixture};
use crate::served::View;

/// Page size of the list, as the informers use.
const PAGE: usize = 500;

/// Figures of one decode run.
#[derive(Debug, Serialize)]
pub struct DecodeFigures {
    /// Pods decoded from list pages per second.
    pub list_objects_per_s: f64,
    /// CPU microseconds per pod decoded from list pages (the decoding thread's own CPU time).
    pub list_cpu_per_object_us: f64,
    /// Watch events (JSON lines) decoded per second into kube's `WatchEvent` (serde's
    /// adjacently-tagged enum, as `kube::Api::watch` decodes them).
    pub watch_events_per_s: f64,
    /// The same lines per second through the reflector's `WatchLineDecoder`, which our
    /// informer's watch uses (one-pass envelope, the object decoded straight into a `Pod`).
    pub watch_line_decoder_events_per_s: f64,
    /// Average JSON size of a listed pod.
    pub average_pod_bytes: usize,
}

/// Decodes every list page and then every event line of a fixture of this size.
pub fn run(objects: usize, events: usize) -> Result<DecodeFigures> {
    let fixture = Fixture::build(objects, events, DEFAULT_NAMESPACES)?;
    let pages: Vec<Vec<u8>> = (0..objects)
        .step_by(PAGE)
        .map(|start| {
            View::full(&fixture)
                .list_chunks(start, PAGE, PAGE, false)
                .fold(Vec::new(), concat)
        })
        .collect();

    let cpu_before = cpu::thread()?;
    let started = Instant::now();
    let mut decoded = 0;
    for page in &pages {
        let list: ObjectList<Pod> = serde_json::from_slice(page)?;
        decoded += list.items.len();
    }
    let list_s = started.elapsed().as_secs_f64();
    let list_cpu_s = cpu::thread()?.saturating_sub(cpu_before).as_secs_f64();
    ensure!(decoded == objects, "decoded {decoded} of {objects} pods");

    let started = Instant::now();
    let mut decoded = 0;
    for line in &fixture.events {
        let event: WatchEvent<Pod> = serde_json::from_slice(line)?;
        decoded += usize::from(!matches!(event, WatchEvent::Error(_)));
    }
    let watch_s = started.elapsed().as_secs_f64();
    ensure!(decoded == events, "decoded {decoded} of {events} events");

    let started = Instant::now();
    let mut decoded = 0;
    let mut decoder = reflector::WatchLineDecoder::<Pod>::new();
    for line in &fixture.events {
        for event in decoder.decode_chunk(line) {
            decoded += usize::from(!matches!(event?, WatchEvent::Error(_)));
        }
    }
    let line_decoder_s = started.elapsed().as_secs_f64();
    ensure!(
        decoded == events,
        "line decoder: decoded {decoded} of {events} events"
    );

    Ok(DecodeFigures {
        list_objects_per_s: objects as f64 / list_s,
        list_cpu_per_object_us: list_cpu_s * 1e6 / objects as f64,
        watch_events_per_s: if events == 0 {
            0.0
        } else {
            events as f64 / watch_s
        },
        watch_line_decoder_events_per_s: if events == 0 {
            0.0
        } else {
            events as f64 / line_decoder_s
        },
        average_pod_bytes: fixture.pod_bytes() / objects,
    })
}

fn concat(mut acc: Vec<u8>, chunk: Bytes) -> Vec<u8> {
    acc.extend_from_slice(&chunk);
    acc
}
