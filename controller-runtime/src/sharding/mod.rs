//! Sharding: spreading one controller's objects over several replicas that all work at once,
//! instead of one elected leader doing everything.
//!
//! The protocol is the one of kubernetes-controller-sharding (Tim Ebert's design), with labels
//! under this framework's own domain. A *ring* is a named set of replicas (*shards*) of one
//! controller. Every object of the ring's kinds is assigned to exactly one shard, chosen by
//! consistent hashing of the object's identity over the shards alive at the time; a shard's
//! caches and watches see only the objects assigned to it.
//!
//! # Consistent hashing
//!
//! [`Ring`] places [`VIRTUAL_NODES_PER_SHARD`] tokens per shard on a 64-bit circle with a
//! stable hash (FNV-1a 64 with MurmurHash3's finaliser, the same in every process and build); an
//! object belongs to the shard of the next token after the object key's position. With that
//! many virtual nodes the shards' shares stay within a few percent of an even split, and a shard
//! joining or leaving moves only the objects that go to it or came from it, about
//! `objects ÷ shards`.
//!
//! # Shard Leases
//!
//! Each replica announces itself with a `coordination.k8s.io/v1` Lease named after its shard and
//! labelled [`RING_LABEL`]` = <ring>`. A [`ShardMember`] holds it the way leader election holds a
//! leader Lease (same timings, same rules, same code): acquire, renew every retry period, stop at
//! the renew deadline, release on graceful shutdown. The sharder reads each Lease as a
//! [`ShardLease`] and judges its [`ShardState`] at the current time:
//!
//! - **ready** until the Lease duration `d` has passed since the last renewal; **expired** up to
//!   `2d`; **uncertain** after that. All three keep the shard on the ring.
//! - **dead** once the shard released its Lease, or the sharder acquired it
//!   ([`take_over_uncertain_shard`]); off the ring, its objects move at once.
//! - **orphaned** [`ORPHAN_AFTER`] past a dead Lease's expiry: the Lease is deleted.
//!
//! # Labels
//!
//! | label | on | value |
//! |---|---|---|
//! | [`RING_LABEL`] (`sharding.kube-rt.dev/ring`) | shard Leases | the ring |
//! | [`shard_label`] (`shard.sharding.kube-rt.dev/<ring>`) | sharded objects | the assigned shard |
//! | [`drain_label`] (`drain.sharding.kube-rt.dev/<ring>`) | sharded objects | [`DRAIN_VALUE`] while the sharder asks the shard to let go |
//!
//! # Moving objects: the drain handshake
//!
//! [`decide`] is the sharder's step for one object: assign an unlabelled one, keep one that is
//! where the ring wants it, reassign at once one whose shard is dead or gone, and *drain* one
//! whose shard is alive but no longer the ring's choice: the sharder sets the drain label, the
//! shard ([`shard_action`]) stops working on the object and removes both labels in one write, and
//! only then does the sharder assign the new shard. So no object is worked on by two shards at
//! once. Owned objects ([`Placement::Owner`]) go where their owner's shard label says, at once. A
//! shard's caches select its objects with [`shard_selector`].
//!
//! # Running it
//!
//! [`ManagerBuilder::sharding`](crate::manager::ManagerBuilder::sharding) does all of it: the
//! manager holds its shard Lease with a [`ShardMember`] (its controllers run while it is held),
//! caches its controllers' primary and owned kinds with [`shard_selector`], asks its [`Shard`]
//! before each reconcile ([`Shard::admit`]), runs the ring's [`Sharder`] (the candidates elect
//! on the ring's sharder Lease, so one works at a time), serves the assignment webhook with a
//! webhook server ([`Manager::sharding_webhook`](crate::manager::Manager::sharding_webhook)),
//! reports `/readyz` `shard` until the sharder marked its Lease ([`ASSIGNED_ANNOTATION`]) and
//! shows the series of [`ShardingSeries`] on `/metrics`. The pieces stay public for other
//! arrangements. Everything of sharding lives in this module: the manager's part
//! (`sharded_manager.rs`), the reconcile guard its controllers ask (`guard.rs`, implementing
//! the controller's narrow shard interface) and the `/metrics` collector (`collector.rs`).
//!
//! # Errors
//!
//! [`Error`]: sharding settings that cannot work ([`ShardingConfig::validate`]), failed
//! requests about shard Leases, the sharder's caches, and drain acknowledgements.

mod assignment;
#[cfg(feature = "metrics")]
pub(crate) mod collector;
mod config;
mod error;
mod guard;
mod hash;
mod labels;
mod lease;
mod member;
mod membership;
mod ring;
mod series;
mod shard;
mod sharded_manager;
mod sharder;
mod state;
mod takeover;
#[cfg(feature = "webhook")]
mod webhook;

#[cfg(test)]
mod assignment_tests;
#[cfg(test)]
mod lease_tests;

pub use assignment::{Assignment, ObjectLabels, Placement, ShardAction, decide, shard_action};
pub use config::ShardingConfig;
pub use error::Error;
pub use labels::{
    ASSIGNED_ANNOTATION, DRAIN_VALUE, LABEL_DOMAIN, RING_LABEL, drain_label, shard_label,
    shard_selector,
};
pub use lease::ShardLease;
pub use member::{MemberEnd, ShardMember};
pub use ring::{Ring, ShardName, VIRTUAL_NODES_PER_SHARD, ring_key};
pub use series::{ShardingSample, ShardingSeries};
pub use shard::{Admission, Shard};
pub(crate) use sharded_manager::ShardedManager;
pub use sharder::{Sharder, SharderCounts, SharderStats};
pub use state::{ORPHAN_AFTER, ShardState};
pub use takeover::{Takeover, take_over_uncertain_shard};
