//! The top of the stack: a [`Manager`](manager::Manager) that owns the client and the
//! [cache], and [`Controller`](controller::Controller)s that turn watch events into
//! reconciles of your [`Reconciler`](controller::Reconciler) through a rate-limited workqueue —
//! controller-runtime's model, on this workspace's `informer`, `workqueue` and `indexer` crates.
//!
//! # A small operator
//!
//! Every ConfigMap gets a Secret with the same data, owned by the ConfigMap (so the garbage
//! collector deletes it with its owner, and deleting the Secret makes the operator recreate
//! it). Run here against the in-process `apiserver-sim`; against a cluster, build the manager
//! with [`Manager::try_default`](manager::Manager::try_default) instead.
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use kube_rt_controller_runtime::prelude::*;
//! use kube_rt_controller_runtime::util::create_or_update;
//! use k8s_openapi::ByteString;
//! use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! use kube::Api;
//!
//! struct MirrorToSecret;
//!
//! impl Reconciler<ConfigMap> for MirrorToSecret {
//!     type Error = ReconcileError;
//!
//!     async fn reconcile(&self, req: Request, ctx: Context<ConfigMap>) -> Result<Action, ReconcileError> {
//!         // Gone: the garbage collector deletes the Secret it owned.
//!         let Some(config) = ctx.get() else { return Ok(Action::done()) };
//!         let data: BTreeMap<String, ByteString> = config
//!             .data
//!             .iter()
//!             .flatten()
//!             .map(|(key, value)| (key.clone(), ByteString(value.clone().into_bytes())))
//!             .collect();
//!         let secrets: Api<Secret> = Api::namespaced(ctx.client().clone(), req.namespace().unwrap_or("default"));
//!         let mut owner_error = None;
//!         create_or_update(&secrets, req.name(), |secret| {
//!             secret.data = Some(data);
//!             owner_error = set_controller_reference(config.as_ref(), secret).err();
//!         })
//!         .await?;
//!         match owner_error {
//!             // Another controller owns a Secret of this name: retrying cannot fix that.
//!             Some(error) => Err(ReconcileError::terminal(error)),
//!             None => Ok(Action::done()),
//!         }
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let server = apiserver_sim::ApiServer::start().await?;
//! # let client = server.client()?;
//! let manager = Manager::builder(client).build();
//! Controller::new(&manager)
//!     .for_(Watch::of::<ConfigMap>())
//!     .owns(Watch::of::<Secret>())
//!     .build(MirrorToSecret)?;
//!
//! let shutdown = manager.shutdown_handle();
//! let running = tokio::spawn(async move { manager.start().await });
//! # let mut config = ConfigMap::default();
//! # config.metadata.namespace = Some("default".into());
//! # config.metadata.name = Some("settings".into());
//! # config.data = Some([("mode".to_string(), "fast".to_string())].into());
//! # server.create(&config)?;
//! # let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
//! # while server.list::<Secret>().is_empty() {
//! #     assert!(tokio::time::Instant::now() < deadline, "the operator did not create the secret");
//! #     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
//! # }
//! # assert_eq!(server.list::<Secret>()[0].data.as_ref().unwrap()["mode"].0, b"fast");
//! // ... until SIGINT/SIGTERM, or:
//! shutdown.shutdown();
//! running.await??;
//! # server.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # The modules
//!
//! | module | what it holds |
//! |---|---|
//! | [`controller`] | the controller builder and its [`Watch`](controller::Watch)es, the [`Reconciler`](controller::Reconciler), [`Context`](controller::Context), [`Action`](controller::Action), [`predicate`](controller::predicate)s, priorities, external sources |
//! | [`cache`] | what a reconcile reads: listers, `Result<Option<_>>` getters, label selectors, field indexes; per-kind settings; typed, metadata-only and dynamic kinds |
//! | [`manager`] | the manager: configuration, start and graceful shutdown, runnables, probes |
//! | [`util`] | what reconcilers call: owner references, `create_or_update`, server-side apply, finalizers (with what happens to the cleanup's result) |
//! | [`events`] | Kubernetes events: `ctx.normal_event(..)`, `ctx.warning_event(..)`, the recorder |
//! | [`leader_election`] | client-go's leader election on Leases |
//! | [`metrics`] | controller-runtime's Prometheus metrics |
//! | [`rbac`] | least-privilege roles generated from what the manager runs |
//! | [`webhook`] | admission and conversion webhooks (feature `webhook`) |
//!
//! [`prelude`] brings the dozen names a first operator needs. Each module's page is its part of
//! the guide, with its own `Error`. Testing an operator: the `kube-rt-testenv` crate (the test
//! environment: an in-process API server with your CRDs, or an existing cluster), described in
//! the repository's README.
//!
//! A controller has exactly one primary kind; a second `for_` does not compile:
//!
//! ```compile_fail
//! # use kube_rt_controller_runtime::prelude::*;
//! # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
//! # fn f(manager: &Manager) {
//! Controller::new(manager).for_(Watch::of::<ConfigMap>()).for_(Watch::of::<Secret>());
//! # }
//! ```

pub mod cache;
pub mod controller;
pub mod events;
mod kind;
pub mod manager;
mod ops;
pub mod prelude;
pub mod rbac;
pub mod util;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use ops::{leader_election, metrics};

/// An object's namespace (if namespaced) and name: what a controller reconciles.
pub use indexer::ObjectKey;

/// The layers below, for their types and for using them directly: the cache and its indices
/// ([`indexer`]), shared informers and their handlers ([`informer`]), work queues and rate
/// limiters ([`workqueue`]).
pub use {indexer, informer, workqueue};
