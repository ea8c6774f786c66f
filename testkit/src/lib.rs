//! Helpers shared by the tests of every crate in this workspace; a dev-dependency only, never
//! published.
//!
//! - [`eventually`], [`eventually_async`] and [`eventually_some`]: poll a condition with a deadline instead of
//!   sleeping, safe in paused-time tests;
//! - [`cluster`]: the server of a test that runs on the simulator, on an existing cluster
//!   (`KUBE_RT_TEST_KUBECONFIG`) or on testenv's own control plane (`KUBE_RT_TEST_ASSETS`), and
//!   [`sim_only`](cluster::sim_only) for tests that need the simulator;
//! - [`config_maps`]: ConfigMaps in the test namespace on an [`ApiServer`](apiserver_sim::ApiServer),
//!   and the name → (resourceVersion, value) state used to compare a cache with the server;
//! - [`Recorder`]: an informer event handler that records every notification;
//! - [`LogCapture`]: a tracing subscriber that keeps each event as a line, for tests of logs;
//! - [`kubectl`]: the real `kubectl` against a simulator;
//! - [`fault`] and [`proxy`]: the fault description a test gives its server, and
//!   [`FaultProxy`](proxy::FaultProxy), which injects those faults — and wire faults: streams
//!   cut mid-event, closed connections, delayed, stalled and truncated answers — in front of
//!   any server, the simulator or a real cluster.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use std::time::Duration;
//! use testkit::config_maps::{put, server_state};
//!
//! let server = apiserver_sim::ApiServer::start().await.unwrap();
//! put(&server, "a", "1");
//! testkit::eventually("a's ConfigMap", Duration::from_secs(5), || {
//!     server_state(&server).contains_key("a")
//! })
//! .await;
//! # }
//! ```

pub mod cluster;
pub mod config_maps;
mod eventually;
pub mod fault;
pub mod kubectl;
mod log_capture;
mod namespace;
pub mod proxy;
mod recorder;

pub use eventually::{WALL_CLOCK_FLOOR, eventually, eventually_async, eventually_some};
pub use log_capture::LogCapture;
pub use recorder::{Event, Recorder};
