//! Operating a manager in production: leader election, Prometheus metrics, and the health probes
//! with the HTTP server that serves them and `/metrics`.
//!
//! - `leader_election/`: [`LeaderElectionConfig`](leader_election::LeaderElectionConfig),
//!   the election record on the Lease, and the [`LeaderElector`](leader_election::LeaderElector).
//! - `metrics/`: [`Metrics`](metrics::Metrics), Prometheus or (without the `metrics` feature)
//!   no-op.
//! - `runnable.rs`: the [`Runnable`](runnable::Runnable) trait the manager runs (re-exported as
//!   `manager::Runnable`), defined here so that controllers, the event recorder and the sharder
//!   implement it without depending on the manager.
//! - `health.rs`: health and readiness checks; `server.rs`: the server of `/metrics` and the
//!   probes; `serve.rs`: the accept loop and HTTP/1.1 serving it shares with the webhook
//!   server.

pub(crate) mod health;
pub mod leader_election;
pub mod metrics;
pub(crate) mod runnable;
pub(crate) mod serve;
pub(crate) mod server;
