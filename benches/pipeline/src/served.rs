//! What one request is served, over the fixture's bytes: the representation (full pods, or
//! `PartialObjectMetadata` when the `Accept` header asks for it, as kube's metadata lists and
//! watches do) and the scope (every namespace, or the one in the path).

use std::collections::HashSet;

use anyhow::{Context, Result};
use bytes::{Bytes, BytesMut};
use serde_json::{Value, json};

use crate::fixtures::{Fixture, build_parallel, event_line, namespace_number};

/// The fixture's pods and events as `PartialObjectMetadata`: each object's `metadata`, nothing
/// else, rendered once when the server starts.
#[derive(Debug)]
pub struct MetadataBytes {
    /// Each pod of the initial list.
    pub pods: Vec<Bytes>,
    /// The relist sentinels.
    pub relist_sentinels: Vec<Bytes>,
    /// Each watch event line (newline included).
    pub events: Vec<Bytes>,
    /// Offset of the sent-time placeholder inside each event line.
    pub sent_offsets: Vec<usize>,
}

/// No metadata rendering, for views of full pods only.
static NO_METADATA: MetadataBytes = MetadataBytes {
    pods: Vec::new(),
    relist_sentinels: Vec::new(),
    events: Vec::new(),
    sent_offsets: Vec::new(),
};

/// A pod's JSON as the `PartialObjectMetadata` a server sends for it.
fn partial(object: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": object.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

fn partial_bytes(pod: &[u8]) -> Result<Bytes> {
    let pod: Value = serde_json::from_slice(pod)?;
    Ok(Bytes::from(serde_json::to_vec(&partial(&pod))?))
}

impl MetadataBytes {
    /// Renders the fixture's objects as metadata.
    pub fn of(fixture: &Fixture) -> Result<Self> {
        let pods = build_parallel(fixture.pods.len(), |i| partial_bytes(&fixture.pods[i]))?;
        let relist_sentinels = fixture
            .relist_sentinels
            .iter()
            .map(|pod| partial_bytes(pod))
            .collect::<Result<_>>()?;
        let prefix = format!("\"{}\":\"", crate::fixtures::SENT_ANNOTATION);
        let built = build_parallel(fixture.events.len(), |j| {
            let event: Value = serde_json::from_slice(&fixture.events[j])?;
            let kind = event["type"].as_str().context("event without a type")?;
            let line = event_line(kind, &serde_json::to_vec(&partial(&event["object"]))?);
            let offset = line
                .windows(prefix.len())
                .position(|w| w == prefix.as_bytes())
                .context("sent placeholder missing")?
                + prefix.len();
            Ok((Bytes::from(line), offset))
        })?;
        let (events, sent_offsets) = built.into_iter().unzip();
        Ok(Self {
            pods,
            relist_sentinels,
            events,
            sent_offsets,
        })
    }
}

/// How objects are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repr {
    /// Full pods.
    Full,
    /// `meta.k8s.io/v1` `PartialObjectMetadata`.
    Metadata,
}

impl Repr {
    /// The representation an `Accept` header asks for.
    pub fn of_accept(accept: Option<&str>) -> Self {
        match accept {
            Some(accept) if accept.contains("as=PartialObjectMetadata") => Repr::Metadata,
            _ => Repr::Full,
        }
    }

    /// `apiVersion` and `kind` of a list (`list`) or of one object (bookmarks).
    fn type_meta(self, list: bool) -> (&'static str, &'static str) {
        match (self, list) {
            (Repr::Full, true) => ("v1", "PodList"),
            (Repr::Full, false) => ("v1", "Pod"),
            (Repr::Metadata, true) => ("meta.k8s.io/v1", "PartialObjectMetadataList"),
            (Repr::Metadata, false) => ("meta.k8s.io/v1", "PartialObjectMetadata"),
        }
    }
}

/// Which pods a request addresses: every namespace, or one (by number).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scope {
    namespace: Option<usize>,
}

impl Scope {
    /// The scope of a pods path (`/api/v1/pods` or `/api/v1/namespaces/<ns>/pods`); `None`
    /// for any other path. A namespace the fixture does not use is a scope with no pods.
    pub fn of_path(path: &str) -> Option<Self> {
        if path == "/api/v1/pods" {
            return Some(Self { namespace: None });
        }
        let namespace = path
            .strip_prefix("/api/v1/namespaces/")?
            .strip_suffix("/pods")?;
        Some(Self {
            namespace: Some(namespace_number(namespace).unwrap_or(usize::MAX)),
        })
    }

    /// Whether an event in namespace `namespace` belongs to this scope.
    pub fn holds(self, namespace: usize) -> bool {
        self.namespace.is_none_or(|own| own == namespace)
    }
}

/// One response's view of the fixture: its representation's bytes, restricted to its scope.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    fixture: &'a Fixture,
    metadata: &'a MetadataBytes,
    /// The representation served.
    pub repr: Repr,
    /// The scope served.
    pub scope: Scope,
}

impl<'a> View<'a> {
    /// The view of a request with this `Accept` header and scope.
    pub fn new(
        fixture: &'a Fixture,
        metadata: &'a MetadataBytes,
        repr: Repr,
        scope: Scope,
    ) -> Self {
        Self {
            fixture,
            metadata,
            repr,
            scope,
        }
    }

    /// The view of full pods across all namespaces.
    pub fn full(fixture: &'a Fixture) -> Self {
        Self::new(fixture, &NO_METADATA, Repr::Full, Scope { namespace: None })
    }

    fn pods(&self) -> &'a [Bytes] {
        match self.repr {
            Repr::Full => &self.fixture.pods,
            Repr::Metadata => &self.metadata.pods,
        }
    }

    fn relist_sentinels(&self) -> &'a [Bytes] {
        match self.repr {
            Repr::Full => &self.fixture.relist_sentinels,
            Repr::Metadata => &self.metadata.relist_sentinels,
        }
    }

    /// The watch event lines of this scope and their placeholder offsets, in order.
    pub fn events(&self) -> impl Iterator<Item = (&'a Bytes, usize)> + 'a {
        let (lines, offsets) = match self.repr {
            Repr::Full => (&self.fixture.events, &self.fixture.sent_offsets),
            Repr::Metadata => (&self.metadata.events, &self.metadata.sent_offsets),
        };
        let scope = self.scope;
        lines
            .iter()
            .zip(offsets.iter().copied())
            .zip(&self.fixture.event_namespaces)
            .filter(move |(_, namespace)| scope.holds(**namespace))
            .map(|(event, _)| event)
    }

    /// The first pod index of this scope's list and the step to the next.
    fn stride(&self) -> (usize, usize) {
        let (total, namespaces) = (self.fixture.pods.len(), self.fixture.namespaces);
        match self.scope.namespace {
            None => (0, 1),
            Some(k) if k < namespaces => (k, namespaces),
            Some(_) => (total, 1),
        }
    }

    /// The index of the pod at each position of this scope's list.
    fn indices(&self) -> impl Iterator<Item = usize> + 'a {
        let (first, step) = self.stride();
        (first..self.fixture.pods.len()).step_by(step)
    }

    /// How many pods this scope's list holds.
    fn len(&self) -> usize {
        let (first, step) = self.stride();
        self.fixture.pods.len().saturating_sub(first).div_ceil(step)
    }

    /// The initial list's pods of this scope.
    pub fn listed(&self) -> impl Iterator<Item = &'a Bytes> + 'a {
        let pods = self.pods();
        self.indices().map(move |i| &pods[i])
    }

    /// The body of a list response holding positions `start..` of this scope's list (up to
    /// `limit` items; all with 0), in chunks of at most `chunk` items, with a continue token
    /// when more follow. A relist serves the relist sentinel and version.
    pub fn list_chunks(
        &self,
        start: usize,
        limit: usize,
        chunk: usize,
        relist: bool,
    ) -> impl Iterator<Item = Bytes> + 'a {
        let total = self.len();
        let start = start.min(total);
        let end = if limit == 0 {
            total
        } else {
            (start + limit).min(total)
        };
        let rv = if relist {
            self.fixture.relist_rv
        } else {
            self.fixture.list_rv
        };
        let continuation = if end < total {
            format!(",\"continue\":\"{end}\"")
        } else {
            String::new()
        };
        let (api_version, kind) = self.repr.type_meta(true);
        let head = format!(
            "{{\"apiVersion\":\"{api_version}\",\"kind\":\"{kind}\",\"metadata\":{{\"resourceVersion\":\"{rv}\"{continuation}}},\"items\":["
        );
        let (pods, sentinels, sentinels_from) = (
            self.pods(),
            self.relist_sentinels(),
            self.fixture.relist_sentinels_from(),
        );
        let (first, step) = self.stride();
        let indices: Vec<usize> = (start..end)
            .map(|position| first + position * step)
            .collect();
        let chunk = chunk.max(1);
        let items = (0..indices.len()).step_by(chunk).map(move |from| {
            let to = (from + chunk).min(indices.len());
            let mut buf = BytesMut::with_capacity((to - from) * 3 * 1024);
            for (position, &i) in indices[from..to].iter().enumerate() {
                if from + position > 0 {
                    buf.extend_from_slice(b",");
                }
                buf.extend_from_slice(if relist && i >= sentinels_from {
                    &sentinels[i - sentinels_from]
                } else {
                    &pods[i]
                });
            }
            buf.freeze()
        });
        std::iter::once(Bytes::from(head))
            .chain(items)
            .chain(std::iter::once(Bytes::from_static(b"]}")))
    }

    /// The initial-events-end bookmark of a streaming list.
    pub fn end_bookmark(&self) -> String {
        let (api_version, kind) = self.repr.type_meta(false);
        format!(
            "{{\"type\":\"BOOKMARK\",\"object\":{{\"kind\":\"{kind}\",\"apiVersion\":\"{api_version}\",\"metadata\":{{\"resourceVersion\":\"{}\",\"annotations\":{{\"{}\":\"true\"}}}}}}}}\n",
            self.fixture.list_rv,
            reflector::INITIAL_EVENTS_END_ANNOTATION
        )
    }
}

/// The scopes whose watches already took their share of the fixture's events (each scope's
/// events go to the first watch of that scope only).
#[derive(Debug, Default)]
pub struct EventsTaken(parking_lot::Mutex<HashSet<(Scope, bool)>>);

impl EventsTaken {
    /// Marks the events of `view`'s scope and representation taken; whether they were free.
    pub fn take(&self, view: &View<'_>) -> bool {
        self.0
            .lock()
            .insert((view.scope, view.repr == Repr::Metadata))
    }
}
