//! A slow handler lags while a fast one keeps up; both end with the full, ordered
//! history.

use crate::common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use informer::FifoKind;

async fn a_slow_handler_lags_without_delaying_a_fast_one<O: TestObject>(kind: FifoKind) {
    let server = TestCluster::start().await.unwrap();
    // The history each object goes through, in resource versions.
    let mut history: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for i in 0..20 {
        let name = format!("cm-{i}");
        history
            .entry(name.clone())
            .or_default()
            .push(rv(&server.put_own(&name, "0").await.unwrap()));
    }
    let informer = config_map_informer::<O>(&server, Duration::ZERO, kind);
    let fast = Recorder::new("fast");
    // Slow: each call waits for a permit (held back until the fast handler is done), then sleeps
    // (10 ms: on a real server, where time is not virtual, 73 calls take under a second).
    let (slow, gate) = Recorder::new("slow")
        .slow(Duration::from_millis(10))
        .gated();
    informer.add_event_handler(fast.clone()).unwrap();
    let slow_registration = informer.add_event_handler(slow.clone()).unwrap();
    let running = spawn(&informer);
    informer.synced().await;

    // Live changes: updates, creates and deletes.
    let mut live = 0;
    for round in 1..=3 {
        for i in (0..20).step_by(round + 1) {
            let name = format!("cm-{i}");
            let stored = server.put_own(&name, &round.to_string()).await.unwrap();
            history.entry(name.clone()).or_default().push(rv(&stored));
            live += 1;
        }
    }
    for i in 20..25 {
        let name = format!("cm-{i}");
        history
            .entry(name.clone())
            .or_default()
            .push(rv(&server.put_own(&name, "new").await.unwrap()));
        live += 1;
    }
    for i in [3, 7, 21] {
        server.remove(&format!("cm-{i}")).await.unwrap();
        live += 1;
    }
    let total = 20 + live;

    eventually(
        "the fast handler got every event",
        Duration::from_secs(30),
        || fast.len() == total,
    )
    .await;
    // The slow handler has not finished a single call; everything else waits in its buffer.
    assert_eq!(slow.len(), 0);
    assert!(slow_registration.buffered() >= total - 1);
    assert_eq!(
        informer
            .listener_buffers()
            .iter()
            .map(|b| b.len)
            .sum::<usize>(),
        slow_registration.buffered()
    );

    gate.add_permits(total);
    eventually(
        "the slow handler caught up",
        Duration::from_secs(600),
        || slow.len() == total,
    )
    .await;
    assert_eq!(
        slow.events(),
        fast.events(),
        "both saw the same history in the same order"
    );

    // That history is complete: per object, every state in order, then the deletion.
    let mut seen: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut deleted = Vec::new();
    for event in fast.events() {
        match event {
            Event::Add(name, rv, _) => seen.entry(name).or_default().push(rv),
            Event::Update(name, old, new, _) => {
                assert_eq!(seen[&name].last(), Some(&old));
                seen.entry(name).or_default().push(new);
            }
            Event::Delete(name, _, tombstone) => {
                assert!(!tombstone);
                deleted.push(name);
            }
        }
    }
    assert_eq!(seen, history);
    deleted.sort();
    assert_eq!(deleted, ["cm-21", "cm-3", "cm-7"]);
    assert_eq!(fast.state(), server.own_state().await.unwrap());

    running.stop().await;
    server.shutdown().await;
}

on_both_fifos_and_compact!(
    a_slow_handler_lags_without_delaying_a_fast_one,
    start_paused = true
);
