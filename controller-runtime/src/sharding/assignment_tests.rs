//! Every row of the sharder's and the shard's decision tables, and a model of stale caches that
//! shows what the drain step is for: moving an object from a live shard without it lets two
//! shards work on the object at once; with it, never.

use std::collections::BTreeMap;

use crate::sharding::assignment::{
    Assignment, ObjectLabels, Placement, ShardAction, decide, shard_action,
};
use crate::sharding::labels::{DRAIN_VALUE, drain_label, shard_label};
use crate::sharding::ring::{Ring, ShardName};

fn shard(name: &str) -> ShardName {
    ShardName::from(name)
}

fn ring(names: &[&str]) -> Ring {
    Ring::new(names.iter().map(|name| shard(name)))
}

/// A key the ring of `a` and `b` assigns to `b` (found, not assumed).
fn key_on(ring: &Ring, wanted: &str) -> String {
    (0..)
        .map(|index| format!("apps/Deployment/default/app-{index}"))
        .find(|key| ring.assign(key).map(ShardName::as_str) == Some(wanted))
        .unwrap_or_default()
}

fn labels(shard: Option<&'static str>, draining: bool) -> ObjectLabels<'static> {
    ObjectLabels { shard, draining }
}

#[test]
fn reads_the_rings_labels_only() {
    let mut object = BTreeMap::from([
        (shard_label("web"), "a".to_owned()),
        (shard_label("jobs"), "x".to_owned()),
        ("app".to_owned(), "web".to_owned()),
    ]);
    assert_eq!(ObjectLabels::of("web", &object), labels(Some("a"), false));
    object.insert(drain_label("web"), DRAIN_VALUE.to_owned());
    assert_eq!(ObjectLabels::of("web", &object), labels(Some("a"), true));
    assert_eq!(ObjectLabels::of("jobs", &object), labels(Some("x"), false));
    assert_eq!(ObjectLabels::of("other", &object), labels(None, false));
    object.insert(shard_label("web"), String::new());
    assert_eq!(
        ObjectLabels::of("web", &object).shard,
        None,
        "an empty value is no shard"
    );
}

#[test]
fn the_sharders_table() {
    let ab = ring(&["a", "b"]);
    let empty = Ring::default();
    let on_b = key_on(&ab, "b");
    let on_b = Placement::Key(&on_b);
    let cases: Vec<(&str, &Ring, Placement<'_>, ObjectLabels<'_>, Assignment)> = vec![
        (
            "unassigned",
            &ab,
            on_b,
            labels(None, false),
            Assignment::Assign { to: shard("b") },
        ),
        (
            "unassigned with a stray drain label",
            &ab,
            on_b,
            labels(None, true),
            Assignment::Assign { to: shard("b") },
        ),
        (
            "on the chosen shard",
            &ab,
            on_b,
            labels(Some("b"), false),
            Assignment::Keep,
        ),
        (
            "on the chosen shard, drain pending",
            &ab,
            on_b,
            labels(Some("b"), true),
            Assignment::Keep,
        ),
        (
            "on another live shard",
            &ab,
            on_b,
            labels(Some("a"), false),
            Assignment::Drain { from: shard("a") },
        ),
        (
            "on another live shard, draining",
            &ab,
            on_b,
            labels(Some("a"), true),
            Assignment::AwaitDrain { from: shard("a") },
        ),
        (
            "on a dead shard",
            &ab,
            on_b,
            labels(Some("dead"), false),
            Assignment::Reassign {
                from: shard("dead"),
                to: shard("b"),
            },
        ),
        (
            "on a shard that died while draining",
            &ab,
            on_b,
            labels(Some("dead"), true),
            Assignment::Reassign {
                from: shard("dead"),
                to: shard("b"),
            },
        ),
        (
            "no shard alive, unassigned",
            &empty,
            on_b,
            labels(None, false),
            Assignment::Keep,
        ),
        (
            "no shard alive, on a dead one",
            &empty,
            on_b,
            labels(Some("a"), false),
            Assignment::Keep,
        ),
    ];
    for (case, ring, placement, labels, expected) in cases {
        assert_eq!(decide(ring, placement, labels), expected, "{case}");
    }
}

#[test]
fn owned_objects_follow_their_owner_at_once() {
    let ab = ring(&["a", "b"]);
    let owner = |shard: Option<&'static str>| Placement::Owner(shard);
    let cases = [
        (
            "owner unassigned",
            owner(None),
            labels(Some("a"), false),
            Assignment::Keep,
        ),
        (
            "owner on a dead shard",
            owner(Some("dead")),
            labels(Some("a"), false),
            Assignment::Keep,
        ),
        (
            "unassigned",
            owner(Some("b")),
            labels(None, false),
            Assignment::Assign { to: shard("b") },
        ),
        (
            "with its owner",
            owner(Some("b")),
            labels(Some("b"), false),
            Assignment::Keep,
        ),
        (
            "with its owner, stray drain label",
            owner(Some("b")),
            labels(Some("b"), true),
            Assignment::Assign { to: shard("b") },
        ),
        (
            "owner moved off a live shard",
            owner(Some("b")),
            labels(Some("a"), false),
            Assignment::Reassign {
                from: shard("a"),
                to: shard("b"),
            },
        ),
        (
            "owner moved off a dead shard",
            owner(Some("b")),
            labels(Some("dead"), true),
            Assignment::Reassign {
                from: shard("dead"),
                to: shard("b"),
            },
        ),
    ];
    for (case, placement, labels, expected) in cases {
        assert_eq!(decide(&ab, placement, labels), expected, "{case}");
    }
}

#[test]
fn the_shards_table() {
    let me = shard("a");
    let cases = [
        (labels(Some("a"), false), ShardAction::Reconcile),
        (labels(Some("a"), true), ShardAction::AcknowledgeDrain),
        (labels(Some("b"), false), ShardAction::Ignore),
        (labels(Some("b"), true), ShardAction::Ignore),
        (labels(None, false), ShardAction::Ignore),
        (labels(None, true), ShardAction::Ignore),
    ];
    for (labels, expected) in cases {
        assert_eq!(shard_action(&me, labels), expected, "{labels:?}");
    }
}

/// One write to an object's labels, and who made it.
struct Version {
    labels: ObjectLabels<'static>,
    writer: Option<&'static str>,
}

/// Runs the sharder (and the shards' acknowledgements) on an object of shard `a` after `b`
/// joined and the ring moved the object to `b`, until nothing is left to do. With `drain`
/// off, a move off a live shard is done the way a dead shard's is. Returns every version of the
/// object's labels.
fn move_object(drain: bool) -> Vec<Version> {
    let ab = ring(&["a", "b"]);
    let key = key_on(&ab, "b");
    let mut history = vec![Version {
        labels: labels(Some("a"), false),
        writer: None,
    }];
    for _ in 0..10 {
        let current = history
            .last()
            .map_or(labels(None, false), |version| version.labels);
        let mut next = match decide(&ab, Placement::Key(&key), current) {
            Assignment::Keep => None,
            Assignment::Drain { .. } if !drain => Some(labels(Some("b"), false)),
            Assignment::Drain { .. } => Some(labels(current.shard, true)),
            Assignment::Assign { to } | Assignment::Reassign { to, .. } => Some(labels(
                if to.as_str() == "a" {
                    Some("a")
                } else {
                    Some("b")
                },
                false,
            )),
            Assignment::AwaitDrain { .. } => None,
        }
        .map(|labels| Version {
            labels,
            writer: None,
        });
        // The shard that must acknowledge does so in the same round.
        if next.is_none() && shard_action(&shard("a"), current) == ShardAction::AcknowledgeDrain {
            next = Some(Version {
                labels: labels(None, false),
                writer: Some("a"),
            });
        }
        match next {
            Some(version) => history.push(version),
            None => break,
        }
    }
    history
}

/// Who might reconcile the object when `at` is the newest version: a shard's cache may show any
/// version from the last one it wrote itself (it knows its own writes) up to the newest.
fn possible_workers(history: &[Version], at: usize) -> Vec<&'static str> {
    ["a", "b"]
        .into_iter()
        .filter(|name| {
            let known = history[..=at]
                .iter()
                .rposition(|version| version.writer == Some(name))
                .unwrap_or(0);
            history[known..=at]
                .iter()
                .any(|version| shard_action(&shard(name), version.labels) == ShardAction::Reconcile)
        })
        .collect()
}

#[test]
fn the_drain_keeps_two_shards_from_working_at_once() {
    let history = move_object(true);
    let last = history.last().map(|version| version.labels);
    assert_eq!(
        last,
        Some(labels(Some("b"), false)),
        "the object ends on the ring's choice"
    );
    assert_eq!(
        history.len(),
        4,
        "assigned, drain asked, acknowledged, assigned again"
    );
    for at in 0..history.len() {
        let workers = possible_workers(&history, at);
        assert!(
            workers.len() <= 1,
            "version {at}: {workers:?} may both work on the object"
        );
    }
}

#[test]
fn without_the_drain_two_shards_can_work_at_once() {
    let history = move_object(false);
    assert_eq!(
        history.last().map(|version| version.labels),
        Some(labels(Some("b"), false))
    );
    let overlaps: Vec<_> = (0..history.len())
        .filter(|at| possible_workers(&history, *at).len() > 1)
        .collect();
    assert!(
        !overlaps.is_empty(),
        "a direct move from a live shard must show an overlap"
    );
}
