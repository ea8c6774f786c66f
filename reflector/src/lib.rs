//! List-and-watch: keep any [`indexer::Store`] equal to the API server's state of one
//! collection, through every failure a real cluster throws at it (client-go's `Reflector`).
//!
//! A [`Reflector`] lists a collection through a [`ListerWatcher`] (by default with one streaming
//! watch, `sendInitialEvents`, as client-go's `WatchListClient` does; in pages where the server
//! has no streaming lists or [`ReflectorOptions::streaming_list`] is off), replaces the store's
//! content with the result, then watches from the list's resource version and applies every
//! event as it arrives. When the watch closes it rewatches from the last resource version it
//! saw; when the server says that version is gone (410), throttles (429), fails, or the
//! connection breaks, it backs off and relists or rewatches exactly as client-go decides. Its
//! store is usually a `deltafifo::DeltaFifo` inside an informer, but any `Store` works — an
//! [`indexer::Indexer`] fed directly is the simplest read-only cache.
//!
//! - [`ListerWatcher`] / [`ApiListerWatcher`]: the two calls to the server; over `kube::Api<K>`
//!   for typed resources and over `Api<DynamicObject>` with an `ApiResource`
//!   ([`ApiListerWatcher::dynamic`]), scoped by the `Api`'s namespace and by label and field
//!   selectors. Over an `Api<PartialObjectMeta<K>>` ([`MetadataListerWatcher`]) it lists and
//!   watches metadata only (`PartialObjectMetadata`), so a cache holds each object's
//!   `ObjectMeta` and nothing else: every reflector feature works the same on it.
//! - [`Reflector`]: [`run`](Reflector::run) until a shutdown token fires;
//!   [`last_sync_resource_version`](Reflector::last_sync_resource_version).
//! - [`ReflectorOptions`]: page size, resync period and its gate
//!   ([`should_resync`](ReflectorOptions::should_resync), client-go's `ShouldResync`, through
//!   which a shared informer resyncs only when one of its handlers is due), streaming or paged
//!   lists, [`Backoff`], watch timeout, where watch bodies are decoded ([`WatchDecoding`]: on
//!   tasks of their own or on the reflector's), error handler, and a backoff observer
//!   ([`BackoffStep`]).
//! - [`Error`]: every failure, with the classification the retry decisions use.
//! - [`WatchLineDecoder`]: the watch wire format (one JSON event per line) decoded from body
//!   chunks split anywhere, with a bound on the line length; [`decode_watch_body`] turns a
//!   response body into the reflector's event stream, decoded where a [`WatchDecoding`] says.
//!
//! - [`Object`]: the bound every object type meets (`Resource + Clone + DeserializeOwned +
//!   Debug + Send + Sync + 'static`), named once here for this crate and the layers above.
//!
//! Objects are decoded once and wrapped in an `Arc` once; the store shares them from there.
//! Logs go through `tracing`: one `reflector` span per run with the resource and its scope;
//! lists and watches at debug, failures at warn.
//!
//! # Errors
//!
//! Nothing stops a reflector but its shutdown token: every [`Error`] goes to the configured
//! error handler and is retried as client-go retries it. Expired or too-large resource
//! versions relist at once; 429 and refused connections back off, then rewatch; other request
//! failures back off, then relist; a watch that closes normally or breaks mid-stream rewatches
//! from the last resource version. Objects that do not decode, have no name, or are of another
//! kind ([`Error::Decode`], [`Error::WatchDecode`], [`Error::MissingMetadata`],
//! [`Error::UnexpectedKind`]) are skipped and reported; the watch goes on. A store that refuses
//! a write ([`Error::Store`]) ends the watch, and the relist hands it the whole state again.
//!
//! # Example
//!
//! A namespace-keyed cache of config maps, kept up to date by a reflector writing into an
//! [`indexer::Indexer`] directly (client-go's `NewNamespaceKeyedIndexerAndReflector`):
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use apiserver_sim::ApiServer;
//! use indexer::{Indexer, Indexers};
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::Api;
//! use reflector::{ApiListerWatcher, Reflector, ReflectorOptions};
//! use tokio_util::sync::CancellationToken;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let server = ApiServer::start().await?;
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! server.create(&cm)?;
//!
//! // The cache, with the namespace index, and the reflector feeding it.
//! let cache: Indexer<ConfigMap> = Indexer::new(Indexers::new().with_namespace());
//! let config_maps: Api<ConfigMap> = Api::namespaced(server.client()?, "default");
//! let reflector = Arc::new(Reflector::new(
//!     Arc::new(ApiListerWatcher::new(config_maps)),
//!     Arc::new(cache.clone()),
//!     ReflectorOptions::default(),
//! ));
//! let shutdown = CancellationToken::new();
//! let task = tokio::spawn({
//!     let (reflector, shutdown) = (reflector.clone(), shutdown.clone());
//!     async move { reflector.run(shutdown).await }
//! });
//!
//! // Wait (with a deadline) until the cache has caught up with the server.
//! tokio::time::timeout(Duration::from_secs(10), async {
//!     while cache.get_by_key(&"default/settings".parse()?).is_none() {
//!         tokio::time::sleep(Duration::from_millis(10)).await;
//!     }
//!     Ok::<_, indexer::Error>(())
//! })
//! .await??;
//! assert_eq!(cache.by_index("namespace", "default")?.len(), 1);
//! assert!(!reflector.last_sync_resource_version().is_empty());
//!
//! shutdown.cancel();
//! task.await?;
//! # Ok(())
//! # }
//! ```

mod backoff;
mod decode;
mod error;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod lister_watcher;
mod object;
mod options;
mod pager;
mod reflector;

pub use backoff::{Backoff, BackoffStep};
pub use decode::{
    DEFAULT_MAX_WATCH_LINE_LEN, DecodeChunk, DecodedLine, ListBodyDecoder, ListPart, ListStream,
    WatchDecoding, WatchLineDecoder, WatchStream, decode_list_body, decode_watch_body,
    decode_watch_event,
};
pub use error::{Error, WatchDecodeError};
/// The cache trait a [`Reflector`] writes into, re-exported from `indexer`.
pub use indexer::Store;
pub use kube::api::{ListParams, ObjectList, WatchEvent, WatchParams};
pub use kube::core::PartialObjectMeta;
pub use lister_watcher::{ApiListerWatcher, ListerWatcher, MetadataListerWatcher};
pub use object::Object;
pub use options::{BackoffObserver, ErrorHandler, ReflectorOptions, ResyncGate};
pub use reflector::{INITIAL_EVENTS_END_ANNOTATION, Reflector};
