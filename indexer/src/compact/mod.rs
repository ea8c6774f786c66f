//! Compact cached objects: each object kept as its encoded JSON beside the little metadata a
//! cache needs eagerly, and decoded into the typed object only when read.
//!
//! - [`Compact<K>`]: the cached form of a `K`. It deserializes from the wire JSON without
//!   building the typed body (the JSON is captured as is; only the lean metadata is parsed), and
//!   is a [`kube::Resource`] of `K`'s kind whose [`meta`](kube::Resource::meta) is that lean
//!   metadata, so keys, namespaces, label selectors, owner references, generation and
//!   resourceVersion work with no decode anywhere in the stack. [`Compact::decode`] gives the
//!   typed object on demand.
//! - [`Codec`]: the per-kind encoder (drops `managedFields`, compresses: [`Encoding`]), applied
//!   as the informer's transform.
//! - [`CompactLister`]: reads a cache of compact objects as typed `Arc<K>`, decoding on demand,
//!   optionally through a bounded set of recently decoded objects ([`RecentlyDecoded`]).
//!
//! The lean metadata holds name, namespace, uid, resourceVersion, generation, labels,
//! ownerReferences, deletionTimestamp and finalizers; everything else (annotations included) is
//! read from the decoded object.

mod body;
mod codec;
mod contexts;
mod dictionary;
mod error;
mod json_text;
mod lister;
mod options;
mod recent;
mod scan;

use std::fmt;
use std::sync::{Arc, OnceLock};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _};
use serde_json::value::RawValue;

pub use codec::{Codec, DictionaryState, TransformResult};
pub use error::DecodeError;
pub use lister::{CompactLister, CompactNamespaceLister};
pub use options::{CodecOptions, Encoding};
pub use recent::RecentlyDecoded;

use body::Body;

/// The cached form of a `K`: its encoded JSON and its lean metadata, decoded into `K` on demand.
///
/// Flows through the reflector, the fifo, the informer and the [`Indexer`](crate::Indexer) as
/// an object type of its own (`Indexer<Compact<Pod>>`). The encoded data and the metadata sit
/// behind one `Arc`, shared by clones and twins ([`detached`](Self::detached)); each instance
/// memoizes the typed object it decoded.
///
/// ```
/// use kube::Resource;
/// use indexer::compact::Compact;
/// use k8s_openapi::api::core::v1::Pod;
///
/// let json = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-1","namespace":"prod","labels":{"app":"web"},"annotations":{"a":"b"}},"spec":{"containers":[{"name":"c"}]}}"#;
/// let pod: Compact<Pod> = serde_json::from_str(json).unwrap();
/// // The lean metadata, read without decoding the body:
/// assert_eq!(pod.meta().name.as_deref(), Some("web-1"));
/// assert!(pod.meta().annotations.is_none());
/// // The typed object, decoded once per instance:
/// let typed = pod.decode().unwrap();
/// assert_eq!(typed.metadata.annotations.as_ref().unwrap()["a"], "b");
/// assert!(std::sync::Arc::ptr_eq(&typed, &pod.decode().unwrap()));
/// ```
pub struct Compact<K> {
    shared: Arc<Shared>,
    decoded: OnceLock<Arc<K>>,
}

/// What twins share: the lean metadata and the encoded JSON.
#[derive(Clone)]
struct Shared {
    meta: ObjectMeta,
    body: Body,
}

impl<K> Compact<K> {
    fn from_shared(shared: Arc<Shared>) -> Self {
        Self {
            shared,
            decoded: OnceLock::new(),
        }
    }

    /// The object parsed from its JSON text (already valid JSON): its lean metadata read, the
    /// text kept as is. Fails when the text is not an object or its metadata is malformed.
    pub(crate) fn from_json_text(text: Box<str>) -> Result<Self, serde_json::Error> {
        let scanned = scan::scan(&text)?;
        Ok(Self::from_shared(Arc::new(Shared {
            meta: scanned.meta,
            body: Body::Json {
                text,
                managed_fields: scanned.managed_fields,
            },
        })))
    }

    /// A twin: shares this object's encoded data and metadata (one small allocation), but not
    /// its decoded object. Caches keep twins, so that a body decoded by a reader does not stay
    /// in memory for as long as the object is cached.
    pub fn detached(&self) -> Self {
        Self::from_shared(Arc::clone(&self.shared))
    }

    /// Whether both share one encoded object (one is a clone or twin of the other).
    pub fn shares_data(&self, other: &Compact<K>) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// The typed object this instance decoded already, if it did; never decodes.
    pub fn decoded(&self) -> Option<&Arc<K>> {
        self.decoded.get()
    }

    /// How the JSON is stored.
    pub fn encoding(&self) -> Encoding {
        self.shared.body.encoding()
    }

    /// The size of the stored data: the encoded JSON alone (not the metadata, not a shared
    /// dictionary).
    pub fn encoded_len(&self) -> usize {
        self.shared.body.len()
    }

    /// The object's JSON as it is decoded (`managedFields` cut out if the codec dropped them).
    pub fn to_json(&self) -> Result<Vec<u8>, DecodeError> {
        self.shared.body.with_json(<[u8]>::to_vec)
    }

    fn body(&self) -> &Body {
        &self.shared.body
    }

    /// The metadata and body, moved out when `self` is the only owner of both, copied otherwise.
    fn into_parts(self: Arc<Self>) -> (ObjectMeta, Body) {
        let shared = match Arc::try_unwrap(self) {
            Ok(only) => Arc::try_unwrap(only.shared).unwrap_or_else(|shared| (*shared).clone()),
            Err(shared) => (*shared.shared).clone(),
        };
        (shared.meta, shared.body)
    }

    /// A new object of `meta` and `body`.
    fn from_parts(meta: ObjectMeta, body: Body) -> Arc<Self> {
        Arc::new(Self::from_shared(Arc::new(Shared { meta, body })))
    }
}

impl<K: DeserializeOwned> Compact<K> {
    /// The typed object, decoded on the first call and kept by this instance (later calls and
    /// clones made after it share it; twins do not).
    pub fn decode(&self) -> Result<Arc<K>, DecodeError> {
        if let Some(decoded) = self.decoded.get() {
            return Ok(Arc::clone(decoded));
        }
        let decoded = Arc::new(self.decode_fresh()?);
        Ok(Arc::clone(self.decoded.get_or_init(|| decoded)))
    }

    /// The typed object, decoded now and kept nowhere: what readers of a cache use, so that the
    /// cached instance stays compact.
    pub fn decode_fresh(&self) -> Result<K, DecodeError> {
        Ok(self
            .shared
            .body
            .with_json(|json| serde_json::from_slice::<K>(json))??)
    }
}

impl<K> Clone for Compact<K> {
    /// Shares the encoded data and the decoded object, if any.
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
            decoded: self.decoded.clone(),
        }
    }
}

impl<K> fmt::Debug for Compact<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let meta = &self.shared.meta;
        f.debug_struct("Compact")
            .field("namespace", &meta.namespace)
            .field("name", &meta.name)
            .field("resource_version", &meta.resource_version)
            .field("body", &self.shared.body)
            .field("decoded", &self.decoded.get().is_some())
            .finish()
    }
}

impl<K: Resource> Resource for Compact<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> std::borrow::Cow<'_, str> {
        K::plural(dt)
    }

    /// The lean metadata (see the [module](self) documentation for its fields).
    fn meta(&self) -> &ObjectMeta {
        &self.shared.meta
    }

    /// The lean metadata, for changes to it alone: the encoded JSON, and so what
    /// [`decode`](Compact::decode) returns, keeps the metadata it arrived with. Forgets the
    /// decoded object, and copies the shared data if a clone or twin shares it.
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.decoded = OnceLock::new();
        &mut Arc::make_mut(&mut self.shared).meta
    }
}

impl<'de, K> Deserialize<'de> for Compact<K> {
    /// Captures the object's JSON (one validating pass) and parses its lean metadata from it;
    /// the body is not decoded. Malformed JSON, a value that is not an object and metadata of
    /// the wrong shape are errors.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Self::from_json_text(raw.into()).map_err(D::Error::custom)
    }
}
