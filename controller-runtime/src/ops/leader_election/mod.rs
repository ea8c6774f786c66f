//! Leader election on `coordination.k8s.io/v1` Leases, following client-go's `leaderelection`
//! package: a [`LeaderElector`] campaigns for one lease, renews it while leading, and releases it
//! on graceful shutdown.
//!
//! # Protocol
//!
//! The lease spec holds client-go's `LeaderElectionRecord`: `holderIdentity`,
//! `leaseDurationSeconds`, `acquireTime`, `renewTime`, `leaseTransitions`. Every
//! [`retry_period`](LeaderElectionConfig::retry_period) a candidate reads the lease. Whenever the
//! record differs from the one it saw last, it notes its *own* monotonic clock (the
//! "observed time"); remote timestamps are never compared with local ones. It takes the lease
//! over only when the lease has no holder, or when `observed time + lease duration` has passed
//! without the record changing. Every write carries the `resourceVersion` that was read, so a
//! conflict (409) means another candidate wrote first and this attempt lost.
//!
//! # Safety: never two leaders at once
//!
//! The leader notes the instant *before* it sends each renewal. If no renewal succeeds by that
//! instant + [`renew_deadline`](LeaderElectionConfig::renew_deadline), it stops leading at once
//! (the deadline is a timer, not the outcome of a request that may hang), and the manager aborts
//! every runnable that needs leadership; [`LeaderElector::is_leader`] also turns false at the
//! deadline by itself, and controllers check it before every reconcile. A standby observed that
//! renewal no earlier than it was sent, and waits `lease duration` from its observation, so it
//! cannot take over before `renewal + lease duration` > `renewal + renew deadline`.
//!
//! This holds if the candidates' clocks *run at the same rate* (no assumption about their
//! absolute values, which are never compared): a leader clock slower than a standby's by more
//! than `(lease duration − renew deadline) / lease duration` (a third, with the defaults) breaks
//! it, as in client-go. Processes paused longer than that margin (a stopped VM) are the classic
//! way to break the assumption.
//!
//! # Errors
//!
//! [`Error`]: settings that cannot work (reported by [`LeaderElectionConfig::validate`] and by
//! the manager's `start`). Losing the lease is not an error of this module: the manager reports
//! it ([`manager::Error::LeadershipLost`](crate::manager::Error::LeadershipLost)).
//!
//! The pieces: [`LeaderElectionConfig`] (settings and their validation, `config.rs`), the
//! election record on the Lease and its reads and writes (`record.rs`), and the
//! [`LeaderElector`] that campaigns, renews and releases (`elector.rs`).

pub(crate) mod config;
pub(crate) mod elector;
mod error;
pub(crate) mod record;

pub use config::{
    DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD, LeaderElectionConfig,
};
pub use elector::{LeaderElector, LeaderState};
pub use error::Error;
