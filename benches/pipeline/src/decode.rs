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

    let (decoded, list) = timed(|| {
        let mut decoded = 0;
        for page in &pages {
            let list: ObjectList<Pod> = serde_json::from_slice(page)?;
            decoded += list.items.len();
        }
        Ok(decoded)
    })?;
    ensure!(decoded == objects, "decoded {decoded} of {objects} pods");

    let (decoded, watch) = timed(|| {
        let mut decoded = 0;
        for line in &fixture.events {
            let event: WatchEvent<Pod> = serde_json::from_slice(line)?;
            decoded += usize::from(!matches!(event, WatchEvent::Error(_)));
        }
        Ok(decoded)
    })?;
    ensure!(decoded == events, "decoded {decoded} of {events} events");

    let kept = decode_and_keep(&pages, &fixture.events, fixture.objects_after_events())?;

    let (decoded, line_decoder) = timed(|| {
        let mut decoded = 0;
        let mut decoder = reflector::WatchLineDecoder::<Pod>::new();
        for line in &fixture.events {
            for event in decoder.decode_chunk(line) {
                decoded += usize::from(!matches!(event?, WatchEvent::Error(_)));
            }
        }
        Ok(decoded)
    })?;
    ensure!(
        decoded == events,
        "line decoder: decoded {decoded} of {events} events"
    );

    Ok(DecodeFigures {
        list_objects_per_s: list.per_second(objects),
        list_cpu_per_object_us: list.cpu_us_each(objects),
        watch_events_per_s: watch.per_second(events),
        watch_cpu_per_event_us: watch.cpu_us_each(events),
        list_kept_objects_per_s: kept.list.per_second(objects),
        list_kept_cpu_per_object_us: kept.list.cpu_us_each(objects),
        watch_kept_events_per_s: kept.watch.per_second(events),
        watch_kept_cpu_per_event_us: kept.watch.cpu_us_each(events),
        watch_line_decoder_events_per_s: line_decoder.per_second(events),
        average_pod_bytes: fixture.pod_bytes() / objects,
    })
}

/// How long a phase took: wall-clock seconds and the decoding thread's own CPU seconds.
struct Timing {
    seconds: f64,
    cpu_seconds: f64,
}

impl Timing {
    /// Items per second for `count` items (0 for none).
    fn per_second(&self, count: usize) -> f64 {
        if count == 0 {
            0.0
        } else {
            count as f64 / self.seconds
        }
    }

    /// CPU microseconds per item for `count` items.
    fn cpu_us_each(&self, count: usize) -> f64 {
        self.cpu_seconds * 1e6 / count.max(1) as f64
    }
}

/// Runs `work` on this thread and times it.
fn timed<T>(work: impl FnOnce() -> Result<T>) -> Result<(T, Timing)> {
    let cpu_before = cpu::thread()?;
    let started = Instant::now();
    let value = work()?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = cpu::thread()?.saturating_sub(cpu_before).as_secs_f64();
    Ok((
        value,
        Timing {
            seconds,
            cpu_seconds,
        },
    ))
}

/// The timings of the two phases of [`decode_and_keep`].
struct KeptTimes {
    list: Timing,
    watch: Timing,
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
    let (listed, list) = timed(|| {
        let mut listed = 0;
        for page in pages {
            let list: ObjectList<Pod> = serde_json::from_slice(page)?;
            listed += list.items.len();
            cache.extend(list.items.into_iter().map(|pod| (key(&pod), Arc::new(pod))));
        }
        Ok(listed)
    })?;
    ensure!(
        cache.len() == listed,
        "the kept map holds {} pods after a list of {listed}",
        cache.len()
    );
    let ((), watch) = timed(|| {
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
        Ok(())
    })?;
    ensure!(
        cache.len() == expected,
        "the kept map holds {} pods, not the {expected} the events leave",
        cache.len()
    );
    Ok(KeptTimes { list, watch })
}

fn concat(mut acc: Vec<u8>, chunk: Bytes) -> Vec<u8> {
    acc.extend_from_slice(&chunk);
    acc
}
