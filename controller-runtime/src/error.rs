//! The error type of this crate.

use std::time::Duration;

/// Everything the manager, the controller builder and the helpers report to their caller.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Two controllers of one manager share a name.
    #[error(
        "a controller named `{0}` is already registered with this manager; give each controller a unique name with `named`"
    )]
    DuplicateName(String),

    /// A controller setting is out of range.
    #[error("invalid setting for controller `{controller}`: {reason}")]
    InvalidSetting {
        /// The controller's name.
        controller: String,
        /// What is wrong and how to fix it.
        reason: String,
    },

    /// The manager was started twice.
    #[error("the manager has already been started; `start` runs once per manager")]
    AlreadyStarted,

    /// A controller or runnable was added after the manager's `start` returned.
    #[error("the manager has stopped; build a new manager to run more controllers")]
    ManagerStopped,

    /// Informer caches did not sync in time (the message names them).
    #[error("caches did not sync: {0}")]
    CacheSync(#[source] informer::Error),

    /// A controller's own event handlers did not sync in time.
    #[error(
        "controller `{controller}`: event handlers for {unsynced} did not sync within {timeout:?}; check that the client may list and watch these resources"
    )]
    HandlersNotSynced {
        /// The controller's name.
        controller: String,
        /// The resources whose handlers had not synced.
        unsynced: String,
        /// How long the controller waited.
        timeout: Duration,
    },

    /// An informer refused a handler or an index.
    #[error("informer error: {0}")]
    Informer(#[from] informer::Error),

    /// A runnable added to the manager failed.
    #[error("runnable `{name}` failed: {message}")]
    Runnable {
        /// The runnable's name.
        name: String,
        /// Its error, as text.
        message: String,
    },

    /// An RBAC rule was refused (it grants nothing).
    #[error("invalid RBAC rule: {0}")]
    InvalidRule(String),

    /// The RBAC roles could not be written as YAML.
    #[error("cannot write the RBAC roles as YAML: {0}")]
    RbacYaml(#[source] serde_yaml::Error),

    /// Listening for SIGINT/SIGTERM failed.
    #[error("cannot listen for shutdown signals: {0}; disable them with `handle_signals(false)`")]
    Signal(#[source] std::io::Error),

    /// In-flight work did not finish within the graceful shutdown timeout.
    #[error("graceful shutdown timed out after {0:?}; some reconciles were cancelled")]
    ShutdownTimeout(Duration),

    /// A second shutdown request arrived before the graceful shutdown finished.
    #[error("shutdown forced by a second signal; in-flight reconciles were cancelled")]
    ForcedShutdown,

    /// This manager lost its leader lease (it failed to renew it before the renew deadline);
    /// its leader-only runnables were stopped at once. Like controller-runtime, which exits
    /// the process here, the caller should exit (or build a new manager to campaign again).
    #[error("leader election lost: the lease was not renewed before the renew deadline")]
    LeadershipLost,

    /// The leader election settings are invalid.
    #[error("invalid leader election settings: {0}")]
    LeaderElection(String),

    /// The metrics or health probe server could not bind its address.
    #[error("cannot listen on {address} for {what}: {source}")]
    Bind {
        /// What the listener was for.
        what: &'static str,
        /// The address.
        address: std::net::SocketAddr,
        /// Why binding failed.
        #[source]
        source: std::io::Error,
    },

    /// A health or readiness check of that name already exists.
    #[error("{0}; give each check a unique name")]
    DuplicateCheck(String),

    /// A type is not cached by the manager (no informer was requested for it before start).
    #[error(
        "`{0}` is not cached by this manager; watch it from a controller (`owns`/`watches`), call `Manager::informer` before `start`, or read it with `Cache::lazy_lister`, which starts its informer"
    )]
    NotCached(String),

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
        "{kind} has no field index `{index}`; register it with `Manager::index_field::<{kind}>(\"{index}\", …)` before querying it"
    )]
    UnknownFieldIndex {
        /// The kind queried.
        kind: String,
        /// The index name asked for.
        index: String,
    },

    /// A read asked for a namespace the manager's cache of the kind does not cover.
    #[error(
        "{kind} in namespace `{namespace}` is not cached: this manager caches {kind} in {cached}; add the namespace with `ManagerBuilder::default_namespaces` or `ManagerBuilder::by_object`, or read it from the API server with the client"
    )]
    NamespaceNotCached {
        /// The kind read.
        kind: String,
        /// The namespace asked for.
        namespace: String,
        /// The namespaces the cache covers, comma-separated.
        cached: String,
    },

    /// The manager's cache options are inconsistent (reported by `start`).
    #[error("invalid cache options: {0}")]
    CacheOptions(String),

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
        "cannot start the informer of {0} before the manager started; read it after `Manager::start` began, or register it with `Manager::informer` beforehand"
    )]
    CacheNotStarted(String),

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

    /// No controller of that name runs in this manager.
    #[error("no controller named `{0}` is registered with this manager")]
    UnknownController(String),

    /// An object lacks a field the operation needs.
    #[error("{kind} object is missing `{field}`; only objects read from the API server carry it")]
    MissingField {
        /// The object's kind.
        kind: String,
        /// The missing field.
        field: &'static str,
    },

    /// The object already has a different controller.
    #[error(
        "object `{object}` is already controlled by {kind} `{name}`; an object can have only one controller owner reference"
    )]
    AlreadyOwned {
        /// The object that was to be owned.
        object: String,
        /// The current controller's kind.
        kind: String,
        /// The current controller's name.
        name: String,
    },

    /// The owner reference would cross a namespace boundary.
    #[error(
        "cannot make `{owner}` own `{object}`: {reason}; owners must be cluster-scoped or in the owned object's namespace"
    )]
    CrossNamespaceOwner {
        /// The owner.
        owner: String,
        /// The owned object.
        object: String,
        /// Why the reference is invalid.
        reason: String,
    },

    /// A request to the API server failed.
    #[error("API request failed: {0}")]
    Kube(#[from] kube::Error),

    /// A webhook could not be registered, or the webhook server could not start.
    #[cfg(feature = "webhook")]
    #[error(transparent)]
    Webhook(#[from] crate::webhook::WebhookError),

    /// An object could not be converted to or from JSON.
    #[error("cannot serialize object: {0}")]
    Serialization(#[from] serde_json::Error),
}
