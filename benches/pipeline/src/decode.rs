//! The physical limit: `serde_json` decoding the served bytes into `k8s_openapi` Pods on one
//! thread, with the same wire types the clients use (`ObjectList`, `WatchEvent`); and, for
//! reference, the same event lines through the reflector's own watch-line decoder.

use std::collections::HashMap;
use std::sync::Arc;
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
    /// CPU microseconds per watch event decoded into `WatchEvent` (the decoding thread's own).
    pub watch_cpu_per_event_us: f64,
    /// List pages' pods per second decoded into a map by namespace and name that keeps every
    /// pod, one thread: what keeping the objects adds to decoding a list (every pod lands in
    /// fresh memory), the initial sync's counterpart of the kept watch row.
    pub list_kept_objects_per_s: f64,
    /// CPU microseconds per pod decoded into that map.
    pub list_kept_cpu_per_object_us: f64,
    /// Watch events per second decoded and applied to a map holding every pod (the list's
    /// pods decoded into it first): each object replaces or removes the one it changes, as a
    /// cache does, one thread. What keeping the objects adds to decoding them.
    pub watch_kept_events_per_s: f64,
    /// CPU microseconds per watch event decoded and applied to that map.
    pub watch_kept_cpu_per_event_us: f64,
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

    let cpu_before = cpu::thread()?;
    let started = Instant::now();
    let mut decoded = 0;
    for line in &fixture.events {
        let event: WatchEvent<Pod> = serde_json::from_slice(line)?;
        decoded += usize::from(!matches!(event, WatchEvent::Error(_)));
    }
    let watch_s = started.elapsed().as_secs_f64();
    let watch_cpu_s = cpu::thread()?.saturating_sub(cpu_before).as_secs_f64();
    ensure!(decoded == events, "decoded {decoded} of {events} events");

    let kept = decode_and_keep(&pages, &fixture.events, fixture.objects_after_events())?;

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
        watch_cpu_per_event_us: watch_cpu_s * 1e6 / events.max(1) as f64,
        list_kept_objects_per_s: objects as f64 / kept.list_s,
        list_kept_cpu_per_object_us: kept.list_cpu_s * 1e6 / objects as f64,
        watch_kept_events_per_s: events as f64 / kept.watch_s,
        watch_kept_cpu_per_event_us: kept.watch_cpu_s * 1e6 / events.max(1) as f64,
        watch_line_decoder_events_per_s: if events == 0 {
            0.0
        } else {
            events as f64 / line_decoder_s
        },
        average_pod_bytes: fixture.pod_bytes() / objects,
    })
}

/// Seconds and CPU seconds of the two phases of [`decode_and_keep`].
struct KeptTimes {
    list_s: f64,
    list_cpu_s: f64,
    watch_s: f64,
    watch_cpu_s: f64,
}

/// Times decoding the list pages into a map by namespace and name, then decoding the event
/// lines and applying each to the map; fails unless the map holds every listed pod after the
/// list and the `expected` pods the events leave at the end.
fn decode_and_keep(pages: &[Vec<u8>], lines: &[Bytes], expected: usize) -> Result<KeptTimes> {
    // Shared objects behind the keys, as every cache holds them (ours and kube-runtime's).
    let mut cache: HashMap<(String, String), Arc<Pod>> = HashMap::new();
    let key = |pod: &Pod| {
        (
            pod.metadata.namespace.clone().unwrap_or_default(),
            pod.metadata.name.clone().unwrap_or_default(),
        )
    };
    let cpu_before = cpu::thread()?;
    let started = Instant::now();
    let mut listed = 0;
    for page in pages {
        let list: ObjectList<Pod> = serde_json::from_slice(page)?;
        listed += list.items.len();
        cache.extend(list.items.into_iter().map(|pod| (key(&pod), Arc::new(pod))));
    }
    let list_s = started.elapsed().as_secs_f64();
    let list_cpu_s = cpu::thread()?.saturating_sub(cpu_before).as_secs_f64();
    ensure!(
        cache.len() == listed,
        "the kept map holds {} pods after a list of {listed}",
        cache.len()
    );
    let cpu_before = cpu::thread()?;
    let started = Instant::now();
    for line in lines {
        match serde_json::from_slice::<WatchEvent<Pod>>(line)? {
            WatchEvent::Added(pod) | WatchEvent::Modified(pod) => {
                cache.insert(key(&pod), Arc::new(pod));
            }
            WatchEvent::Deleted(pod) => {
                cache.remove(&key(&pod));
            }
            WatchEvent::Bookmark(_) | WatchEvent::Error(_) => {}
        }
    }
    let watch_s = started.elapsed().as_secs_f64();
    let watch_cpu_s = cpu::thread()?.saturating_sub(cpu_before).as_secs_f64();
    ensure!(
        cache.len() == expected,
        "the kept map holds {} pods, not the {expected} the events leave",
        cache.len()
    );
    Ok(KeptTimes {
        list_s,
        list_cpu_s,
        watch_s,
        watch_cpu_s,
    })
}

fn concat(mut acc: Vec<u8>, chunk: Bytes) -> Vec<u8> {
    acc.extend_from_slice(&chunk);
    acc
}
