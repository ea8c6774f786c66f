//! The sharder's decision for one object, and the shard's, as pure functions: what the labels of
//! an object say, what the ring wants, and which single step brings them together without two
//! shards ever working on the object at once.
//!
//! # The sharder
//!
//! | the object | the ring's choice | step |
//! |---|---|---|
//! | has no shard label | some shard | [`Assign`](Assignment::Assign) it |
//! | on the chosen shard | the same | [`Keep`](Assignment::Keep) |
//! | on a live shard, not the chosen one | another | [`Drain`](Assignment::Drain): ask its shard to let go |
//! | on a live shard, drain label set | another | [`AwaitDrain`](Assignment::AwaitDrain): the shard has not acknowledged yet |
//! | on a shard that is dead or gone | some shard | [`Reassign`](Assignment::Reassign) at once: nobody works on it |
//! | anything | none (empty ring) | [`Keep`](Assignment::Keep): there is nowhere to put it |
//!
//! A live shard is one on the ring (ready, expired or uncertain). An object whose drain label is
//! set while it already sits on the ring's choice is left alone too: its shard acknowledges the
//! drain, and the next pass assigns it again (usually to the same shard).
//!
//! *Owned* objects (those with a controller owner reference to an object of the ring) go where
//! their owner's shard label says, and move at once, never drained: their shard works on them
//! only through their owner, whose drain already keeps two shards apart. While the owner has no
//! live shard in its label, its owned objects stay where they are.
//!
//! # The shard
//!
//! A shard works on an object only while the object's shard label names it and no drain label is
//! set ([`ShardAction::Reconcile`]). Seeing the drain label on its object it stops working on it
//! and removes both labels in one write ([`ShardAction::AcknowledgeDrain`]); that write is the
//! moment it lets go, and the sharder assigns the object only after seeing it.

use std::collections::BTreeMap;

use crate::sharding::labels::{drain_label, shard_label};
use crate::sharding::ring::{Ring, ShardName};

/// An object's sharding labels for one ring.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObjectLabels<'a> {
    /// The shard label's value, if set (an empty value counts as unset).
    pub shard: Option<&'a str>,
    /// Whether the drain label is set.
    pub draining: bool,
}

impl<'a> ObjectLabels<'a> {
    /// The sharding labels of `ring` among an object's `labels`.
    pub fn of(ring: &str, labels: &'a BTreeMap<String, String>) -> Self {
        Self {
            shard: labels
                .get(&shard_label(ring))
                .map(String::as_str)
                .filter(|shard| !shard.is_empty()),
            draining: labels.contains_key(&drain_label(ring)),
        }
    }
}

/// Where the ring wants an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement<'a> {
    /// An object of the ring's own kinds: wherever the ring assigns its key.
    Key(&'a str),
    /// An owned object: on its owner's shard (its owner's shard label; `None` while the owner
    /// has none). An owner's shard that is not on the ring is ignored.
    Owner(Option<&'a str>),
}

/// The sharder's single next step for an object (see the [module docs](crate::sharding)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Assignment {
    /// Nothing to do.
    Keep,
    /// The drain label is set and its shard, still alive, has not acknowledged: wait.
    AwaitDrain {
        /// The shard being drained.
        from: ShardName,
    },
    /// Set the shard label (and drop a stray drain label).
    Assign {
        /// The shard to assign.
        to: ShardName,
    },
    /// Set the drain label: the object's live shard must let go before it can move.
    Drain {
        /// The shard holding the object.
        from: ShardName,
    },
    /// Set the shard label to another shard and drop the drain label at once: the current shard
    /// is dead or gone (or the object is owned and follows its owner).
    Reassign {
        /// The shard the object was on.
        from: ShardName,
        /// The shard it goes to.
        to: ShardName,
    },
}

/// The sharder's next step for an object with `labels` and `placement`, given the `ring` built
/// from the live shards.
pub fn decide(ring: &Ring, placement: Placement<'_>, labels: ObjectLabels<'_>) -> Assignment {
    let (desired, owned) = match placement {
        Placement::Key(key) => (ring.assign(key).map(ShardName::as_str), false),
        Placement::Owner(owner) => (owner.filter(|shard| ring.contains(shard)), true),
    };
    let Some(desired) = desired else {
        return Assignment::Keep;
    };
    let Some(current) = labels.shard else {
        return Assignment::Assign {
            to: ShardName::from(desired),
        };
    };
    let (from, to) = (ShardName::from(current), ShardName::from(desired));
    if owned {
        return match (current == desired, labels.draining) {
            (true, false) => Assignment::Keep,
            // Owned objects are never drained: a stray drain label just goes.
            (true, true) => Assignment::Assign { to },
            (false, _) => Assignment::Reassign { from, to },
        };
    }
    if !ring.contains(current) {
        return Assignment::Reassign { from, to };
    }
    match (current == desired, labels.draining) {
        // A drain pending on the chosen shard: let the shard acknowledge it.
        (true, _) => Assignment::Keep,
        (false, true) => Assignment::AwaitDrain { from },
        (false, false) => Assignment::Drain { from },
    }
}

/// What a shard does with an object it sees (see the [module docs](crate::sharding)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ShardAction {
    /// The object is this shard's: reconcile it.
    Reconcile,
    /// The sharder asks this shard to let go: stop working on it and remove both labels.
    AcknowledgeDrain,
    /// Not this shard's object: leave it alone.
    Ignore,
}

/// What `shard` does with an object that has `labels`.
pub fn shard_action(shard: &ShardName, labels: ObjectLabels<'_>) -> ShardAction {
    match labels.shard {
        Some(owner) if owner == shard.as_str() && labels.draining => ShardAction::AcknowledgeDrain,
        Some(owner) if owner == shard.as_str() => ShardAction::Reconcile,
        _ => ShardAction::Ignore,
    }
}
