//! The workload: deterministic Pods of about 2–3 KB of JSON and the watch events that follow the
//! initial list, serialized once so that the server only copies bytes.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use bytes::Bytes;
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, ContainerStatus, EnvVar, Pod, PodCondition, PodSpec, PodStatus,
    ResourceRequirements, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldsV1, ManagedFieldsEntry, ObjectMeta, OwnerReference, Time,
};
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

/// Annotation carrying the wall-clock time (ns since the epoch, 20 zero-padded digits) at which
/// the server wrote the event; the server overwrites the placeholder in place.
pub const SENT_ANNOTATION: &str = "bench.pipeline/sent-ns";
/// The placeholder value of [`SENT_ANNOTATION`] in pre-serialized events.
pub const SENT_PLACEHOLDER: &[u8; 20] = b"00000000000000000000";
/// Namespaces the pods are spread over unless told otherwise (`--namespaces`).
pub const DEFAULT_NAMESPACES: usize = 50;

/// The serialized workload shared by the server and the decode limit.
#[derive(Debug)]
pub struct Fixture {
    /// Each pod of the initial list, as JSON.
    pub pods: Vec<Bytes>,
    /// Each watch event, as one JSON line (newline included).
    pub events: Vec<Bytes>,
    /// Offset of [`SENT_PLACEHOLDER`] inside each event line.
    pub sent_offsets: Vec<usize>,
    /// Resource version of the initial list.
    pub list_rv: u64,
    /// The last listed pod of each namespace, re-serialized with [`Fixture::relist_rv`]: a
    /// relist serves them in place of the originals so that clients can tell when the relist
    /// reached their caches (each of them, with one cache per namespace). They are the last
    /// [`Fixture::relist_sentinels_from`]`..` pods of the list, in order.
    pub relist_sentinels: Vec<Bytes>,
    /// Resource version of a relist.
    pub relist_rv: u64,
    /// Namespaces the pods are spread over: pod `i` lives in namespace `i % namespaces`
    /// ([`namespace_name`]).
    pub namespaces: usize,
    /// The namespace (number) of each watch event's pod.
    pub event_namespaces: Vec<usize>,
}

/// Where the last watch event lands: the client waits for this pod at this resource version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Marker {
    /// Namespace of the pod.
    pub namespace: String,
    /// Name of the pod.
    pub name: String,
    /// Resource version the pod has once the marker event is in the cache.
    pub resource_version: String,
}

impl Fixture {
    /// Builds `objects` pods and `events` watch events (mostly MODIFIED, one in ten an ADDED of
    /// a new pod or a DELETED of an earlier added one, which leaves `objects` pods in the end;
    /// the closing events are MODIFIEDs, one in each namespace: see
    /// [`Fixture::namespace_markers`]).
    pub fn build(objects: usize, events: usize, namespaces: usize) -> Result<Self> {
        anyhow::ensure!(objects > 0, "--objects must be at least 1");
        anyhow::ensure!(namespaces > 0, "--namespaces must be at least 1");
        let shape = Shape {
            objects,
            events,
            namespaces,
        };
        let list_rv = objects as u64;
        let pods = build_parallel(objects, |i| {
            let pod = pod(i, namespaces, i as u64 + 1, i.is_multiple_of(2), false);
            Ok(Bytes::from(serde_json::to_vec(&pod)?))
        })?;
        let average = pods.iter().map(Bytes::len).sum::<usize>() / objects;
        anyhow::ensure!(
            (1_500..3_500).contains(&average),
            "the fixture's pods average {average} bytes, not the workload's 2–3 KB"
        );
        let prefix = format!("\"{SENT_ANNOTATION}\":\"");
        let built = build_parallel(events, |j| {
            let rv = list_rv + 1 + j as u64;
            let (kind, pod) = shape.event(j, rv);
            let line = event_line(kind, &serde_json::to_vec(&pod)?);
            let offset =
                find(&line, prefix.as_bytes()).context("sent placeholder missing")? + prefix.len();
            Ok((Bytes::from(line), offset))
        })?;
        let (lines, sent_offsets) = built.into_iter().unzip();
        let relist_rv = list_rv + events as u64 + 1;
        let sentinels_from = objects - namespaces.min(objects);
        let relist_sentinels = (sentinels_from..objects)
            .map(|i| {
                let pod = pod(i, namespaces, relist_rv, i.is_multiple_of(2), false);
                Ok(Bytes::from(serde_json::to_vec(&pod)?))
            })
            .collect::<Result<_>>()?;
        Ok(Self {
            pods,
            events: lines,
            sent_offsets,
            list_rv,
            relist_sentinels,
            relist_rv,
            namespaces,
            event_namespaces: (0..events)
                .map(|j| shape.event_pod(j) % namespaces)
                .collect(),
        })
    }

    fn shape(&self) -> Shape {
        Shape {
            objects: self.pods.len(),
            events: self.events.len(),
            namespaces: self.namespaces,
        }
    }

    /// The pod and resource version the last watch event leaves in the cache (the last listed
    /// pod at its list version when there are no events).
    pub fn watch_marker(&self) -> Marker {
        let events = self.events.len();
        if events == 0 {
            return marker(self.pods.len() - 1, self.namespaces, self.list_rv);
        }
        self.modified_marker(events - 1)
    }

    /// One marker per namespace that has watch events: the state its last event (a closing
    /// MODIFIED) leaves. A cache per namespace has every event once it shows all of them; a
    /// count alone cannot tell, as a namespace the watch has not reached yet holds its listed
    /// pods, just as many as after an ADDED and its DELETED.
    ///
    /// Every namespace with events has a closing event unless there are fewer listed pods than
    /// namespaces; then [`Fixture::markers_cover_every_namespace`] is false.
    pub fn namespace_markers(&self) -> Vec<Marker> {
        let shape = self.shape();
        (shape.events - shape.closing()..shape.events)
            .map(|j| self.modified_marker(j))
            .collect()
    }

    /// Whether [`Fixture::namespace_markers`] covers every namespace that has watch events.
    pub fn markers_cover_every_namespace(&self) -> bool {
        let closing = self.shape().closing();
        self.event_namespaces.iter().all(|&k| k < closing)
    }

    /// The marker of the MODIFIED event `j`.
    fn modified_marker(&self, j: usize) -> Marker {
        let rv = self.list_rv + 1 + j as u64;
        marker(self.shape().event_pod(j), self.namespaces, rv)
    }

    /// The index of the first relist sentinel's pod.
    pub fn relist_sentinels_from(&self) -> usize {
        self.pods.len() - self.relist_sentinels.len()
    }

    /// The relist sentinels' markers: a cache has the relist once it shows all of them.
    pub fn relist_markers(&self) -> Vec<Marker> {
        (self.relist_sentinels_from()..self.pods.len())
            .map(|i| marker(i, self.namespaces, self.relist_rv))
            .collect()
    }

    /// The number of pods in the cache after every event.
    pub fn objects_after_events(&self) -> usize {
        let shape = self.shape();
        let count = |kind| (0..shape.events).filter(|&j| shape.kind(j) == kind).count();
        self.pods.len() + count(Kind::Added) - count(Kind::Deleted)
    }

    /// Total bytes of the pods' JSON.
    pub fn pod_bytes(&self) -> usize {
        self.pods.iter().map(Bytes::len).sum()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Added,
    Modified,
    Deleted,
}

/// The workload's counts, which decide each event's kind and pod.
#[derive(Debug, Clone, Copy)]
struct Shape {
    objects: usize,
    events: usize,
    namespaces: usize,
}

impl Shape {
    /// How many closing events there are: one MODIFIED of pod `t` (in namespace `t`) for each
    /// namespace `t` that has listed pods, as far as there are events.
    fn closing(self) -> usize {
        self.events.min(self.namespaces).min(self.objects)
    }

    /// Before the closing events, one in twenty events adds a pod and one in twenty deletes the
    /// pod added ten events earlier (a pod whose deletion would fall among the closing events
    /// is not added: every added pod is gone by the end).
    fn kind(self, j: usize) -> Kind {
        let closing_from = self.events - self.closing();
        match j % 20 {
            0 if j + 10 < closing_from => Kind::Added,
            10 if j < closing_from => Kind::Deleted,
            _ => Kind::Modified,
        }
    }

    /// The index of the pod event `j` is about. A MODIFIED before the closing events changes a
    /// list pod spread over the list, deterministically.
    fn event_pod(self, j: usize) -> usize {
        let closing_from = self.events - self.closing();
        match self.kind(j) {
            Kind::Added => self.objects + j,
            Kind::Deleted => self.objects + j - 10,
            Kind::Modified if j >= closing_from => j - closing_from,
            Kind::Modified => j.wrapping_mul(7919) % self.objects,
        }
    }

    fn event(self, j: usize, rv: u64) -> (&'static str, Pod) {
        let (i, namespaces) = (self.event_pod(j), self.namespaces);
        match self.kind(j) {
            Kind::Added => ("ADDED", pod(i, namespaces, rv, false, true)),
            Kind::Deleted => ("DELETED", pod(i, namespaces, rv, false, true)),
            Kind::Modified => (
                "MODIFIED",
                pod(i, namespaces, rv, i.is_multiple_of(2), true),
            ),
        }
    }
}

/// A watch event line as a real API server writes it: `type` first, then the object (in the
/// order its type serializes its fields), then a newline. (A `json!` map would sort the keys
/// and put `object` first, which makes every decoder buffer or re-scan the object.)
pub fn event_line(kind: &str, object: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(object.len() + kind.len() + 24);
    line.extend_from_slice(b"{\"type\":\"");
    line.extend_from_slice(kind.as_bytes());
    line.extend_from_slice(b"\",\"object\":");
    line.extend_from_slice(object);
    line.extend_from_slice(b"}\n");
    line
}

/// `build(0..n)` on every core (the fixture is built before anything is measured).
pub fn build_parallel<T: Send>(
    n: usize,
    build: impl Fn(usize) -> Result<T> + Sync,
) -> Result<Vec<T>> {
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let per_thread = n.div_ceil(threads).max(1);
    let build = &build;
    let parts: Vec<Result<Vec<T>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..n)
            .step_by(per_thread)
            .map(|from| {
                scope.spawn(move || (from..(from + per_thread).min(n)).map(build).collect())
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("fixture thread panicked")))
            })
            .collect()
    });
    let mut all = Vec::with_capacity(n);
    for part in parts {
        all.extend(part?);
    }
    Ok(all)
}

fn marker(i: usize, namespaces: usize, rv: u64) -> Marker {
    Marker {
        namespace: namespace_name(i % namespaces),
        name: format!("pod-{i}"),
        resource_version: rv.to_string(),
    }
}

/// The name of namespace number `k`.
pub fn namespace_name(k: usize) -> String {
    format!("team-{k:02}")
}

/// The number of a namespace named by [`namespace_name`], if it is one.
pub fn namespace_number(name: &str) -> Option<usize> {
    name.strip_prefix("team-")?.parse().ok()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn time(seconds: i64) -> Option<Time> {
    Timestamp::from_second(1_780_000_000 + seconds)
        .ok()
        .map(Time)
}

/// One pod: labels, annotations, an owner, one container, four conditions; managed fields when
/// `managed`; the sent-time placeholder when it belongs to a watch event.
fn pod(i: usize, namespaces: usize, rv: u64, managed: bool, with_sent: bool) -> Pod {
    let app = format!("app-{}", i % 97);
    let labels = BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), app.clone()),
        (
            "app.kubernetes.io/instance".to_owned(),
            format!("{app}-prod"),
        ),
        (
            "pod-template-hash".to_owned(),
            format!("{:010x}", i.wrapping_mul(2_654_435_761)),
        ),
        (
            "tier".to_owned(),
            ["web", "api", "worker"][i % 3].to_owned(),
        ),
    ]);
    let mut annotations = BTreeMap::from([
        (
            "kubectl.kubernetes.io/restartedAt".to_owned(),
            "2026-11-20T10:00:00Z".to_owned(),
        ),
        ("prometheus.io/scrape".to_owned(), "true".to_owned()),
        (
            "checksum/config".to_owned(),
            format!("{:064x}", (i as u128).wrapping_mul(0x9e37_79b9_7f4a_7c15)),
        ),
    ]);
    if with_sent {
        let placeholder = String::from_utf8_lossy(SENT_PLACEHOLDER).into_owned();
        annotations.insert(SENT_ANNOTATION.to_owned(), placeholder);
    }
    let metadata = ObjectMeta {
        name: Some(format!("pod-{i}")),
        namespace: Some(namespace_name(i % namespaces)),
        uid: Some(format!("{:08x}-0000-4000-8000-{:012x}", i, rv)),
        resource_version: Some(rv.to_string()),
        creation_timestamp: time(i as i64 % 86_400),
        generate_name: Some(format!("{app}-{:010x}-", i.wrapping_mul(2_654_435_761))),
        labels: Some(labels),
        annotations: Some(annotations),
        owner_references: Some(vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "ReplicaSet".into(),
            name: format!("{app}-{:010x}", i.wrapping_mul(2_654_435_761)),
            uid: format!("{:08x}-1111-4000-8000-000000000000", i % 97),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]),
        managed_fields: managed.then(|| managed_fields(i)),
        ..ObjectMeta::default()
    };
    Pod {
        metadata,
        spec: Some(spec(i, &app)),
        status: Some(status(i)),
    }
}

fn spec(i: usize, app: &str) -> PodSpec {
    let quantity = |s: &str| Quantity(s.to_owned());
    PodSpec {
        node_name: Some(format!("node-{:03}", i % 500)),
        service_account_name: Some(app.to_owned()),
        containers: vec![Container {
            name: app.to_owned(),
            image: Some(format!("registry.example.com/{app}:v1.{}.0", i % 20)),
            ports: Some(vec![ContainerPort {
                container_port: 8080,
                name: Some("http".into()),
                protocol: Some("TCP".into()),
                ..ContainerPort::default()
            }]),
            env: Some(vec![
                EnvVar {
                    name: "LOG_LEVEL".into(),
                    value: Some("info".into()),
                    ..EnvVar::default()
                },
                EnvVar {
                    name: "POD_INDEX".into(),
                    value: Some(i.to_string()),
                    ..EnvVar::default()
                },
            ]),
            resources: Some(ResourceRequirements {
                requests: Some(BTreeMap::from([
                    ("cpu".to_owned(), quantity("100m")),
                    ("memory".to_owned(), quantity("128Mi")),
                ])),
                limits: Some(BTreeMap::from([("memory".to_owned(), quantity("256Mi"))])),
                ..ResourceRequirements::default()
            }),
            volume_mounts: Some(vec![VolumeMount {
                name: "config".into(),
                mount_path: "/etc/app".into(),
                read_only: Some(true),
                ..VolumeMount::default()
            }]),
            ..Container::default()
        }],
        volumes: Some(vec![Volume {
            name: "config".into(),
            ..Volume::default()
        }]),
        ..PodSpec::default()
    }
}

fn status(i: usize) -> PodStatus {
    let condition = |kind: &str| PodCondition {
        type_: kind.to_owned(),
        status: "True".into(),
        last_transition_time: time(i as i64 % 86_400 + 5),
        ..PodCondition::default()
    };
    PodStatus {
        phase: Some("Running".into()),
        pod_ip: Some(format!("10.{}.{}.{}", i >> 16 & 255, i >> 8 & 255, i & 255)),
        host_ip: Some(format!("192.168.{}.{}", i / 500 % 256, i % 250)),
        start_time: time(i as i64 % 86_400 + 1),
        conditions: Some(
            [
                "PodReadyToStartContainers",
                "Initialized",
                "Ready",
                "ContainersReady",
                "PodScheduled",
            ]
            .map(condition)
            .into(),
        ),
        container_statuses: Some(vec![ContainerStatus {
            name: format!("app-{}", i % 97),
            ready: true,
            restart_count: (i % 3) as i32,
            image: format!("registry.example.com/app-{}:v1.{}.0", i % 97, i % 20),
            image_id: format!("registry.example.com/app@sha256:{:064x}", i),
            container_id: Some(format!("containerd://{:064x}", (i as u128) << 7)),
            started: Some(true),
            ..ContainerStatus::default()
        }]),
        ..PodStatus::default()
    }
}

fn managed_fields(i: usize) -> Vec<ManagedFieldsEntry> {
    let spec = json!({"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app.kubernetes.io/name": {}, "f:app.kubernetes.io/instance": {}, "f:pod-template-hash": {}, "f:tier": {}}, "f:ownerReferences": {".": {}, "k:{\"uid\":\"x\"}": {}}},
        "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:env": {".": {}, "k:{\"name\":\"LOG_LEVEL\"}": {".": {}, "f:name": {}, "f:value": {}}}, "f:image": {}, "f:name": {}, "f:ports": {".": {}, "k:{\"containerPort\":8080,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}}}, "f:resources": {".": {}, "f:limits": {".": {}, "f:memory": {}}, "f:requests": {".": {}, "f:cpu": {}, "f:memory": {}}}}}, "f:serviceAccountName": {}, "f:volumes": {".": {}, "k:{\"name\":\"config\"}": {}}}});
    let status = json!({"f:status": {"f:conditions": {"k:{\"type\":\"ContainersReady\"}": {".": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Initialized\"}": {".": {}, "f:status": {}, "f:type": {}}, "k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}}, "f:containerStatuses": {}, "f:hostIP": {}, "f:phase": {}, "f:podIP": {}, "f:startTime": {}}});
    let entry = |manager: &str, operation: &str, fields: &serde_json::Value, sub: Option<&str>| {
        ManagedFieldsEntry {
            manager: Some(manager.to_owned()),
            operation: Some(operation.to_owned()),
            api_version: Some("v1".into()),
            fields_type: Some("FieldsV1".into()),
            fields_v1: Some(FieldsV1(fields.clone())),
            subresource: sub.map(str::to_owned),
            time: time(i as i64 % 86_400),
        }
    };
    vec![
        entry("kube-controller-manager", "Update", &spec, None),
        entry("kubelet", "Update", &status, Some("status")),
    ]
}

#[cfg(test)]
#[path = "fixtures_tests.rs"]
mod tests;
