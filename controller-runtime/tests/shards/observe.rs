//! What the parent observes of the ring while the soak runs, apart from the members: the shard
//! labels of every ConfigMap version its watch delivers ([`Labels`]), and the ring's membership
//! as the sharder judges it from the shard Leases ([`Membership`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use controller_runtime::sharding::{ObjectLabels, ShardLease};
use informer::{InformerFactory, InformerScope, handler};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::member::RING;
use crate::members::journal::now_us;
use crate::target::Target;

/// One version of a ConfigMap as the parent's watch delivered it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at_us: i64,
    pub uid: String,
    pub rv: String,
    pub shard: Option<String>,
    pub draining: bool,
}

/// An object's shard label changed from one shard to another (passing through no label, as a
/// drained object does, or directly, as one moved off a dead shard), when the parent saw it.
#[derive(Debug, Clone, Copy)]
pub struct Move {
    pub at_us: i64,
}

/// Every ConfigMap version the parent's watch delivered, by `namespace/name`.
#[derive(Clone, Default)]
pub struct Labels(Arc<Mutex<HashMap<String, Vec<Seen>>>>);

impl Labels {
    /// Watches every ConfigMap of `namespace` through `client` (an informer: it relists after
    /// a broken watch, so a version may be missed then, never misread) until `factory` is shut
    /// down.
    pub fn watch(&self, client: kube::Client, namespace: &str) -> Result<InformerFactory, String> {
        let factory = InformerFactory::new(client);
        let informer = factory.informer_in::<ConfigMap>(InformerScope::namespace(namespace));
        let (add, update) = (self.clone(), self.clone());
        informer
            .add_event_handler(
                handler::<ConfigMap>()
                    .named("shard-label-history")
                    .on_add(move |cm, _| add.record(&cm))
                    .on_update(move |_, cm| update.record(&cm)),
            )
            .map_err(|e| format!("label history: {e}"))?;
        factory.start();
        Ok(factory)
    }

    fn record(&self, cm: &ConfigMap) {
        let empty = Default::default();
        let labels = ObjectLabels::of(RING, cm.metadata.labels.as_ref().unwrap_or(&empty));
        let seen = Seen {
            at_us: now_us(),
            uid: cm.uid().unwrap_or_default(),
            rv: cm.resource_version().unwrap_or_default(),
            shard: labels.shard.map(str::to_owned),
            draining: labels.draining,
        };
        let key = format!("{}/{}", cm.namespace().unwrap_or_default(), cm.name_any());
        self.0.lock().entry(key).or_default().push(seen);
    }

    /// The shard label of `key` at `rv`, when the watch delivered that version.
    pub fn shard_at(&self, key: &str, rv: &str) -> Option<Option<String>> {
        let history = self.0.lock();
        let seen = history.get(key)?.iter().find(|seen| seen.rv == rv)?;
        Some(seen.shard.clone())
    }

    /// Every move, in the order observed per object (an object deleted and created again is
    /// a new object: a move needs the same uid).
    pub fn moves(&self) -> Vec<Move> {
        let mut moves = Vec::new();
        for versions in self.0.lock().values() {
            let mut last: Option<(&str, &str)> = None;
            for seen in versions {
                let Some(shard) = seen.shard.as_deref() else {
                    continue;
                };
                if let Some((uid, from)) = last
                    && uid == seen.uid
                    && from != shard
                {
                    moves.push(Move { at_us: seen.at_us });
                }
                last = Some((&seen.uid, shard));
            }
        }
        moves
    }

    /// How many times an object was seen being drained (versions with the drain label that
    /// follow one without).
    pub fn drains(&self) -> usize {
        self.0
            .lock()
            .values()
            .map(|versions| {
                versions
                    .windows(2)
                    .filter(|pair| pair[1].draining && !pair[0].draining)
                    .count()
            })
            .sum()
    }

    /// Versions delivered so far.
    pub fn versions(&self) -> usize {
        self.0.lock().values().map(Vec::len).sum()
    }
}

/// The ring changed: the shards on it before and after, and how many ConfigMaps there were.
#[derive(Debug, Clone)]
pub struct Change {
    pub at_us: i64,
    pub before: BTreeSet<String>,
    pub after: BTreeSet<String>,
    pub objects: usize,
}

/// The ring's membership over time, judged from the shard Leases the way the sharder judges it
/// (a shard is on the ring while its Lease is held by it, renewed or not; off once released or
/// taken over).
#[derive(Clone, Default)]
pub struct Membership(Arc<Mutex<Vec<Change>>>);

impl Membership {
    /// Reads the Leases from the server every few milliseconds until `stop`. A shard stays off
    /// (or on) the ring for seconds at least, so no change is missed; a read that fails (a
    /// real server's request) is made again at the next tick.
    pub async fn record(self, target: Arc<Target>, stop: CancellationToken) {
        while !stop.is_cancelled() {
            let now = Timestamp::now();
            let Ok(leases) = target.leases().await else {
                tokio::time::sleep(target.poll_interval()).await;
                continue;
            };
            let live: BTreeSet<String> = leases
                .iter()
                .filter_map(ShardLease::from_lease)
                .filter(|lease| lease.ring() == Some(RING) && lease.state(now).is_available())
                .map(|lease| lease.shard().as_str().to_owned())
                .collect();
            if live != self.live() {
                // Counted when the change is seen; a failed read: the change is seen again at
                // the next tick.
                let at_us = now_us();
                if let Ok((cms, _)) = target.objects().await {
                    let change = Change {
                        at_us,
                        before: self.live(),
                        after: live,
                        objects: cms.len(),
                    };
                    self.0.lock().push(change);
                }
            }
            tokio::time::sleep(target.poll_interval()).await;
        }
    }

    /// The shards on the ring now.
    pub fn live(&self) -> BTreeSet<String> {
        self.0
            .lock()
            .last()
            .map(|change| change.after.clone())
            .unwrap_or_default()
    }

    /// Every change so far.
    pub fn changes(&self) -> Vec<Change> {
        self.0.lock().clone()
    }
}
