//! The manager's built-in health checks: `/healthz` `ping`, and the readiness conditions
//! `/readyz` `informers` (caches synced, or a standby waiting for leadership) and
//! `leader-election` (the elector task runs), and for a sharded manager `shard` (its Lease held
//! and its share given).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use informer::InformerFactory;

use crate::ops::health::{self, Probe, Probes};
use crate::ops::leader_election::elector::LeaderElector;
use crate::sharding::ShardMember;

/// The built-in readiness conditions.
#[derive(Clone)]
pub(crate) struct Readiness {
    /// Set once the manager's informer caches synced.
    pub(crate) synced: Arc<AtomicBool>,
    /// The elector, when the manager elects (and its settings are valid).
    pub(crate) elector: Option<LeaderElector>,
    /// Whether a standby syncs its caches before it leads.
    pub(crate) warm_up: bool,
    /// The manager's informers, to name the ones not synced yet.
    pub(crate) factory: InformerFactory,
    /// A sharded manager's shard Lease holder.
    pub(crate) shard: Option<ShardMember>,
}

impl Readiness {
    /// Registers `ping`, `informers` and, when electing, `leader-election` in `probes`.
    pub(crate) fn add_builtin_checks(self, probes: &Probes) {
        // The names cannot collide in an empty registry.
        let _ = probes.add(Probe::Healthz, "ping", Arc::new(health::ping), false);
        let caches = self.clone();
        let _ = probes.add(
            Probe::Readyz,
            "informers",
            Arc::new(move || caches.caches_ready()),
            true,
        );
        if let Some(member) = self.shard.clone() {
            let _ = probes.add(
                Probe::Readyz,
                "shard",
                Arc::new(move || shard_ready(&member)),
                true,
            );
        }
        if self.elector.is_some() {
            let _ = probes.add(
                Probe::Readyz,
                "leader-election",
                Arc::new(move || self.elector_running()),
                true,
            );
        }
    }

    fn caches_ready(&self) -> Result<(), String> {
        if self.synced.load(Ordering::SeqCst) {
            return Ok(());
        }
        // A standby without warm-up starts its informers only once it leads.
        if let Some(elector) = &self.elector
            && !self.warm_up
            && elector.is_running()
            && !elector.is_leader()
        {
            return Ok(());
        }
        let unsynced = self.factory.unsynced();
        if unsynced.is_empty() {
            return Err("caches not synced yet".to_owned());
        }
        Err(format!(
            "caches not synced yet: waiting for {}",
            unsynced.join(", ")
        ))
    }

    fn elector_running(&self) -> Result<(), String> {
        match &self.elector {
            Some(elector) if elector.is_running() => Ok(()),
            _ => Err("leader elector not running".to_owned()),
        }
    }
}

/// A shard is ready once it holds its Lease and the ring's sharder has given it its share.
fn shard_ready(member: &ShardMember) -> Result<(), String> {
    let (ring, shard) = (member.ring(), member.shard());
    if !member.is_held() {
        Err(format!(
            "shard {shard} of ring {ring} does not hold its shard Lease"
        ))
    } else if !member.is_assigned() {
        Err(format!(
            "shard {shard} of ring {ring}: waiting for the sharder to give it its share"
        ))
    } else {
        Ok(())
    }
}
