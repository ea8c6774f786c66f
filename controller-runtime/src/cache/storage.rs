//! How a kind's cache keeps its objects ([`Storage`]): typed, as the decoded `Arc<K>`, or
//! compact, as each object's encoded JSON beside the little metadata the cache needs eagerly,
//! decoded when read.

use std::sync::Arc;

use indexer::compact::{CodecOptions, Compact, CompactLister, RecentlyDecoded};
use informer::{Object, SharedIndexInformer};

/// How the manager's cache of a kind keeps its objects; set per kind with
/// [`ByObject::storage`](crate::cache::ByObject::storage) or for every typed kind with
/// [`ManagerBuilder::default_storage`](crate::manager::ManagerBuilder::default_storage).
///
/// - [`Storage::typed`] (the default): each object decoded once, when it arrives, and kept as
///   the typed `Arc<K>`. Reads cost nothing; memory is that of the whole decoded tree.
/// - [`Storage::compact`]: each object kept as its JSON, `managedFields` cut out unless the
///   manager keeps them, compressed as the [`CodecOptions`] say (zstd with a dictionary trained
///   on the kind's first objects by default), beside its lean metadata: name, namespace, uid,
///   resourceVersion, generation, labels, owner references, deletion timestamp and finalizers.
///   Lists and watches never decode an object's body; a read (a lister, [`Context::get`],
///   a field-index query) decodes the objects it returns. Events need no decode to become keys
///   (the primary watch, `owns`), nor to pass the built-in metadata predicates
///   (`GenerationChanged`, `LabelsChanged`, `ResourceVersionChanged`, `LabelSelector`); other
///   predicates (annotations, closures) and a `watches` mapper read the decoded object, decoded
///   once per event. See docs/benchmarks.md for what each costs.
///
/// What a read returns is the same in both, field for field (but `managedFields`, which both
/// drop unless the manager keeps them). A kind with a [transform](crate::cache::ByObject::transform)
/// is always typed: the transform works on the typed object. Metadata-only and dynamic caches
/// are always typed.
///
/// [`Context::get`]: crate::controller::Context::get
///
/// ```
/// # use controller_runtime::cache::{ByObject, Storage};
/// # use controller_runtime::indexer::compact::{CodecOptions, Encoding};
/// # use k8s_openapi::api::core::v1::Pod;
/// // Pods compact, as plain JSON (no compression), keeping the last 1 000 objects read decoded.
/// let pods = ByObject::of::<Pod>().storage(
///     Storage::compact()
///         .codec(CodecOptions::new().encoding(Encoding::Json))
///         .recently_decoded(1_000),
/// );
/// # let _ = pods;
/// ```
#[derive(Clone, Debug, Default)]
pub struct Storage {
    compact: Option<CompactSettings>,
}

/// The settings of compact storage.
#[derive(Clone, Debug)]
pub(crate) struct CompactSettings {
    pub(crate) codec: CodecOptions,
    pub(crate) recently_decoded: usize,
}

impl Storage {
    /// Objects kept typed: decoded when they arrive (the default).
    pub fn typed() -> Self {
        Self::default()
    }

    /// Objects kept compact, with the codec's defaults ([`CodecOptions::new`]) and no set of
    /// recently decoded objects.
    pub fn compact() -> Self {
        Self {
            compact: Some(CompactSettings {
                codec: CodecOptions::new(),
                recently_decoded: 0,
            }),
        }
    }

    /// Objects kept compact with `options` (compact storage even if this was typed).
    pub fn codec(self, options: CodecOptions) -> Self {
        let recently_decoded = self.compact.map_or(0, |compact| compact.recently_decoded);
        Self {
            compact: Some(CompactSettings {
                codec: options,
                recently_decoded,
            }),
        }
    }

    /// Keeps up to `capacity` of the objects decoded last (by reads and by event handlers),
    /// each at its resourceVersion, so that reading one again costs no decode; for controllers
    /// that read the same objects again and again. Compact storage even if this was typed.
    pub fn recently_decoded(self, capacity: usize) -> Self {
        let mut compact = self.compact.unwrap_or_else(|| CompactSettings {
            codec: CodecOptions::new(),
            recently_decoded: 0,
        });
        compact.recently_decoded = capacity;
        Self {
            compact: Some(compact),
        }
    }

    /// Whether objects are kept compact.
    pub fn is_compact(&self) -> bool {
        self.compact.is_some()
    }

    /// `typed` or `compact`, for messages.
    pub(crate) fn name(&self) -> &'static str {
        if self.is_compact() {
            "compact"
        } else {
            "typed"
        }
    }

    /// The compact settings, when compact.
    pub(crate) fn compact_settings(&self) -> Option<&CompactSettings> {
        self.compact.as_ref()
    }
}

/// The informers of one kind's cache, in the storage the kind was given.
pub(crate) enum Informers<K: Object> {
    /// Typed: objects as `Arc<K>`.
    Typed(Vec<Arc<SharedIndexInformer<K>>>),
    /// Compact: objects as `Arc<Compact<K>>`, read through one lister per informer.
    Compact(Vec<CompactInformer<K>>),
}

/// One informer of a compact cache and the lister that reads it typed.
pub(crate) struct CompactInformer<K: Object> {
    pub(crate) informer: Arc<SharedIndexInformer<Compact<K>>>,
    pub(crate) reader: CompactLister<K>,
}

impl<K: Object> CompactInformer<K> {
    /// `informers`, each read through a lister that decodes through `recent` (shared by all).
    pub(crate) fn all(
        informers: Vec<Arc<SharedIndexInformer<Compact<K>>>>,
        recent: Option<Arc<RecentlyDecoded<K>>>,
    ) -> Vec<Self> {
        informers
            .into_iter()
            .map(|informer| {
                let reader = CompactLister::new(informer.indexer().clone());
                let reader = match &recent {
                    Some(recent) => reader.shared_recently_decoded(Arc::clone(recent)),
                    None => reader,
                };
                Self { informer, reader }
            })
            .collect()
    }
}
