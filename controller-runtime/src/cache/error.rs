//! The error of the manager's cache.

use std::time::Duration;

/// What reading, indexing or configuring the [`Cache`](crate::cache::Cache) can fail with.
/// None of these stops the manager: a reconcile that meets one fails (and is retried) like any
/// other error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A kind is not cached by the manager (nothing registered it).
    #[error(
        "{0} is not cached by this manager; watch it from a controller (`Watch::of`), ask for its informers with `Cache::informers` before `start`, or read it with `Cache::lazy_lister`, which starts its informer"
    )]
    NotCached(String),

    /// A read asked for a namespace the manager's cache of the kind does not cover.
    #[error(
        "{kind} in namespace `{namespace}` is not cached: this manager caches {kind} in {cached}; add the namespace with `ManagerBuilder::default_namespaces` or `ByObject::namespaces`, or read it from the API server with the client"
    )]
    NamespaceNotCached {
        /// The kind read.
        kind: String,
        /// The namespace asked for.
        namespace: String,
        /// The namespaces the cache covers, comma-separated.
        cached: String,
    },

    /// A field index name was registered twice for one kind.
    #[error(
        "field index `{index}` is already registered for {kind}; register each index name once per kind"
    )]
    FieldIndexExists {
        /// The kind the index was registered on.
        kind: String,
        /// The index name.
        index: String,
    },

    /// A query named a field index that was never registered for the kind.
    #[error(
        "{kind} has no field index `{index}`; register it with `Cache::index_field` before querying it"
    )]
    UnknownFieldIndex {
        /// The kind queried.
        kind: String,
        /// The index name asked for.
        index: String,
    },

    /// Typed informers were asked of a kind whose cache keeps its objects compact.
    #[error(
        "{0} is cached compact: its informers hold `Compact` objects; read it through the cache's listers (which decode), ask for `Cache::compact_informers`, or give it `Storage::typed()` with `ByObject::storage`"
    )]
    CompactStorage(String),

    /// The per-kind cache settings of a kind contradict each other.
    #[error("invalid cache settings for {kind}: {reason}")]
    InvalidSettings {
        /// The kind whose settings are invalid.
        kind: String,
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// A lazily started informer did not sync in time.
    #[error(
        "the cache of {kind} did not sync within {timeout:?}; check that the API server serves {kind} and that the client may list and watch it"
    )]
    LazySyncTimeout {
        /// The kind whose informer was started.
        kind: String,
        /// How long the read waited.
        timeout: Duration,
    },

    /// A lazy read was made before the manager started its caches.
    #[error(
        "cannot start the informer of {0} before the manager started; read it after `Manager::start` began, or register it with `Cache::informers` beforehand"
    )]
    NotStarted(String),

    /// The API server does not serve a kind (yet): its CRD is not installed or not established.
    #[error(
        "the API server does not serve {kind}{}; install its CustomResourceDefinition (and wait until it is established) or fix the group, version and plural",
        waited.map(|waited| format!(" (waited {waited:?})")).unwrap_or_default()
    )]
    KindNotServed {
        /// The kind, with its apiVersion and plural.
        kind: String,
        /// How long the manager waited for it, if it waited.
        waited: Option<Duration>,
    },

    /// An informer refused an index or a handler (it has stopped, or the index name is taken).
    #[error("informer error: {0}")]
    Informer(#[from] informer::Error),

    /// A request to the API server failed (discovery, or waiting for a kind).
    #[error("API request failed: {0}")]
    Api(#[from] kube::Error),
}
