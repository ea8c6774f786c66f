//! A test environment for operators, in the spirit of controller-runtime's envtest: an API
//! server — by default an in-process one (`apiserver-sim`, the real wire protocol over HTTP on
//! loopback), or a real kube-apiserver (see [Which server](#which-server)) — with your CRDs
//! installed and established, a `kube::Client` for it, managers that start and stop with the
//! test, and a wait with a deadline whose failure says what was awaited.
//!
//! # Use
//!
//! 1. [`TestEnv::builder`]: CRDs from Rust types ([`crd`](TestEnvBuilder::crd), e.g.
//!    `Foo::crd()`), from YAML files ([`crd_file`](TestEnvBuilder::crd_file)) or directories
//!    ([`crd_dir`](TestEnvBuilder::crd_dir)); simulator options
//!    ([`server`](TestEnvBuilder::server)) or another server ([Which server](#which-server));
//!    the wait timeout; optional
//!    [`webhooks`](TestEnvBuilder::webhooks). [`start`](TestEnvBuilder::start) returns once
//!    every CRD is served.
//! 2. [`TestEnv::manager`] (or [`manager_builder`](TestEnv::manager_builder) to configure it):
//!    a manager on the environment's client that ignores signals and stops with the
//!    environment. Register controllers on it, then [`TestEnv::start_manager`].
//! 3. Act through [`TestEnv::client`] in [`TestEnv::namespace`], seed or inspect the simulator
//!    through [`TestEnv::simulator`], and wait
//!    for the operator with [`TestEnv::eventually`]: it polls until a condition returns `true`,
//!    `Some(value)`, `Ok(true)` or `Ok(Some(value))` (see [`Outcome`]) and otherwise fails with
//!    [`Error::Timeout`], naming the condition and its last error.
//! 4. [`RunningManager::stop`] reports whether the manager failed; dropping the environment
//!    stops everything.
//!
//! ```
//! use controller_runtime::prelude::*;
//! use kube::api::{Api, Patch, PatchParams, PostParams};
//! use kube::CustomResource;
//! use testenv::TestEnv;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Widget", namespaced)]
//! #[kube(status = "WidgetStatus")]
//! pub struct WidgetSpec {
//!     size: i32,
//! }
//!
//! #[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
//! pub struct WidgetStatus {
//!     seen: i32,
//! }
//!
//! # #[tokio::main]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use kube::CustomResourceExt;
//! let env = TestEnv::builder().crd(Widget::crd()).start().await?;
//!
//! // The operator under test: it copies spec.size into status.seen.
//! let manager = env.manager();
//! Controller::new(&manager).for_(Watch::of::<Widget>()).build(reconciler_fn(
//!     |_: Request, ctx: Context<Widget>| async move {
//!         if let Some(widget) = ctx.get() {
//!             let status = serde_json::json!({"status": {"seen": widget.spec.size}});
//!             ctx.patch_status(&PatchParams::default(), &Patch::Merge(&status)).await?;
//!         }
//!         Ok::<_, kube::Error>(Action::done())
//!     },
//! ))?;
//! let running = env.start_manager(manager);
//!
//! let widgets: Api<Widget> = Api::default_namespaced(env.client());
//! widgets
//!     .create(&PostParams::default(), &Widget::new("w", WidgetSpec { size: 3 }))
//!     .await?;
//! let seen = env
//!     .eventually("the widget's status", || async {
//!         Some(widgets.get("w").await.ok()?.status?.seen)
//!     })
//!     .await?;
//! assert_eq!(seen, 3);
//! running.stop().await?;
//! # Ok(()) }
//! ```
//!
//! # An existing cluster
//!
//! # Which server
//!
//! The same test source runs on three servers; the test, or whoever runs the tests, picks one:
//!
//! | server | chosen by | pick it for |
//! |---|---|---|
//! | the embedded simulator | default: no variable set; or a test that needs it ([`TestEnvBuilder::server`], [`require_simulator`](TestEnvBuilder::require_simulator)) | everyday tests: it starts in milliseconds and needs no binaries; fault injection, virtual time, its own view of the objects |
//! | testenv's own control plane | [`ASSETS_VAR`]: `KUBE_RT_TEST_ASSETS=<dir>` for every environment; or [`TestEnvBuilder::control_plane`]`(dir)` for one | the real kube-apiserver's validation, defaulting, admission, RBAC and CRD handling without a cluster (envtest's mode); with [`controller_manager`](TestEnvBuilder::controller_manager), the real garbage collector and namespace controller |
//! | an existing cluster | [`KUBECONFIG_VAR`]: `KUBE_RT_TEST_KUBECONFIG=<kubeconfig>` | a cluster you already run (with a scheduler and nodes, an admission chain of its own, the version you deploy to) |
//!
//! Setting both variables is an error ([`Error::Lane`]). On either real server every environment
//! makes a scratch namespace of its own ([`TestEnv::namespace`], the client's default namespace;
//! managers from [`TestEnv::manager_builder`] cache only it), installs the CRDs through the API
//! (applied, then awaited until established and served), and, when it ends, deletes what is in
//! its namespaces, the namespaces and its webhook configurations (finalizers removed and the
//! namespace finalized, so a bare API server without a controller-manager is left clean too),
//! and waits until the namespaces are gone. CRDs stay installed. A test that needs the
//! simulator says so — [`TestEnvBuilder::server`], [`TestEnvBuilder::require_simulator`],
//! [`TestEnv::simulator_or_skip`], [`skip_on_existing_cluster`] — and is skipped on a real server
//! with a notice starting with [`SKIP_NOTICE`].
//!
//! ## testenv's own control plane
//!
//! The directory holds `kube-apiserver` and `etcd` (and `kube-controller-manager` for the tests
//! that ask for one): the layout of envtest's binaries, as `setup-envtest` downloads them and
//! `KUBEBUILDER_ASSETS` names them. `KUBEBUILDER_ASSETS` alone does not select this mode — Go
//! developers keep it exported for their own projects, and a Rust project's tests would then
//! leave the simulator unasked; `KUBE_RT_TEST_ASSETS=$KUBEBUILDER_ASSETS cargo test` opts in.
//!
//! A test process starts one control plane for every environment it makes
//! ([`ControlPlane::shared`]): etcd and kube-apiserver on free loopback ports, with a CA and
//! serving certificate, an admin token (group `system:masters`), a ServiceAccount signing key
//! and RBAC as the only authorizer. Its start takes a few seconds — the API server bootstraps
//! its roles — once per test binary. It ends with the process, however the process ends: the
//! servers are killed and their data directory removed even when the test harness exits
//! without running destructors or the process is killed (see [`control_plane`]). A test that
//! wants a control plane of its own (flags of its own, a cluster-scoped state nobody else
//! touches) starts a [`ControlPlane`] and runs on it with
//! [`on_control_plane`](TestEnvBuilder::on_control_plane); it stops when the last handle goes.
//! Tests that exist only for this mode take the directory from [`assets_or_skip`], which skips
//! them with a notice when it is not set.
//!
//! # Webhooks
//!
//! With [`TestEnvBuilder::webhooks`] (feature `webhook`, on by default) the environment makes a
//! CA and a serving certificate; managers from [`TestEnv::manager_builder`] get a webhook server
//! on a free loopback port that presents it; after `start_manager`,
//! [`RunningManager::install_webhooks`] writes the validating and mutating webhook
//! configurations that route the simulator to that server. [`webhook::ServingCerts`] is also
//! usable on its own.
//!
//! # Errors
//!
//! Every call returns [`Error`]: a CRD the server refuses (with the server's Status), a YAML
//! document that is not a CRD (naming the file and document), a control plane that could not
//! start (a missing binary, or a server that exited, with the end of its log), a manager that
//! failed or panicked, or a wait that timed out.
//!
//! # Reading these docs from your package
//!
//! testenv is a dev-dependency, and `cargo doc -p kube-rt-testenv` in a package that has it only
//! there panics inside cargo (rust-lang/cargo#11105), with or without `--no-deps`. Three ways
//! that work:
//!
//! - Document an example target: examples build with the dev-dependencies, so `cargo doc`
//!   documents them. In a package with an example, run `cargo doc --examples`; in one without,
//!   add one — `examples/docs.rs` holding `fn main() {}` — and run the same. The pages are then
//!   at `target/doc/testenv/index.html`, beside every other dependency's.
//! - Build them where the crate is a workspace member: `cargo doc --no-deps -p kube-rt-testenv
//!   --open` in a clone of the framework's repository at the commit your `Cargo.lock` pins, or
//!   in the checkout cargo made of that commit for your git dependency
//!   (`~/.cargo/git/checkouts/kube-rt-<hash>/<commit's first 7 characters>/`, with
//!   `--target-dir` pointing into your own target directory).
//! - List the crate under `[dependencies]` for a moment and run `cargo doc -p kube-rt-testenv
//!   --no-deps --open`.
//!
//! # Versions
//!
//! The simulator serves every kind of the newest Kubernetes version `k8s-openapi` knows, and
//! enables `k8s-openapi`'s `latest` feature: a crate that tests with this one picks `latest` too.

mod builder;
pub mod cluster;
pub mod control_plane;
mod crds;
mod env;
mod error;
pub mod lane;
mod pki;
mod running;
mod skip;
mod wait;
#[cfg(feature = "webhook")]
pub mod webhook;

pub use builder::TestEnvBuilder;
pub use cluster::ExistingCluster;
pub use control_plane::{ControlPlane, ControlPlaneBuilder};
pub use crds::{read_crd_dir, read_crd_file};
pub use env::TestEnv;
pub use error::Error;
pub use lane::{ASSETS_VAR, KUBECONFIG_VAR, on_existing_cluster};
pub use running::RunningManager;
pub use skip::{REACHED_NOTICE, SKIP_NOTICE, assets_or_skip, skip_on_existing_cluster};

/// The namespace a test works in on the simulator (on an existing cluster, the environment's
/// scratch namespace: [`TestEnv::namespace`]).
pub const SIMULATOR_NAMESPACE: &str = "default";
pub use wait::{DEFAULT_TIMEOUT, Outcome, POLL_INTERVAL, eventually};
