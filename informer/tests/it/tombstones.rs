//! Objects deleted while the watch is down, with the history compacted, reach the
//! handler after the relist as tombstones carrying the last known state.

use crate::common;

use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use informer::FifoKind;
use testkit::fault::InjectFaults;

async fn deletions_missed_while_disconnected_arrive_as_tombstones<O: TestObject>(kind: FifoKind) {
    let server = TestCluster::start_with_faults().await.unwrap();
    for i in 0..10 {
        server.put_own(&format!("cm-{i}"), "0").await.unwrap();
    }
    let informer = config_map_informer::<O>(&server, Duration::ZERO, kind);
    let recorder = Recorder::new("recorder");
    informer.add_event_handler(recorder.clone()).unwrap();
    let running = spawn(&informer);
    informer.synced().await;
    // One object changes while connected: its last known state is this newer version.
    let known_rv = rv(&server.put_own("cm-1", "1").await.unwrap());
    eventually("the update", Duration::from_secs(30), || {
        recorder.len() == 11
    })
    .await;
    let cached = cache_state(&informer);
    assert_eq!(cached["cm-1"], known_rv);

    // The watch goes down and cannot come back; meanwhile objects are deleted (one of them after
    // a change the informer never sees), and the history is compacted.
    for verb in ["watch", "list"] {
        server
            .inject(FailRule::new(verb, "configmaps", 500, 1_000))
            .unwrap();
    }
    server.drop_watches();
    server.put_own("cm-2", "unseen").await.unwrap();
    for i in [1, 2, 5, 8] {
        server.remove(&format!("cm-{i}")).await.unwrap();
    }
    server.compact().await.unwrap();
    // Three attempts to come back fail (on the tokio clock: instant on the simulator, a few
    // backoff steps on a real server).
    let attempts =
        || server.request_count("watch", "configmaps") + server.request_count("list", "configmaps");
    let before = attempts();
    eventually("three failed attempts", Duration::from_secs(30), || {
        attempts() >= before + 3
    })
    .await;
    assert_eq!(
        recorder.len(),
        11,
        "nothing can reach the informer while it is disconnected"
    );

    server.clear_faults();
    let on_server = server.own_state().await.unwrap();
    eventually("the relist", Duration::from_secs(120), || {
        cache_state(&informer) == on_server
    })
    .await;
    // The relist also re-delivers the 6 unchanged objects as updates with old and new at the same
    // version (resync is off, so every handler gets them, as in client-go).
    eventually("the tombstones", Duration::from_secs(30), || {
        recorder.len() == 21
    })
    .await;
    let (mut tombstones, unchanged): (Vec<Event>, Vec<Event>) = recorder.events()[11..]
        .iter()
        .cloned()
        .partition(|event| matches!(event, Event::Delete(..)));
    assert_eq!(unchanged.len(), 6);
    for event in unchanged {
        assert!(
            matches!(&event, Event::Update(_, old, new, false) if old == new),
            "{event:?}"
        );
    }
    tombstones.sort_by(|a, b| a.name().cmp(b.name()));
    let expected: Vec<Event> = [1, 2, 5, 8]
        .iter()
        .map(|i| {
            let name = format!("cm-{i}");
            let last = cached[&name].clone();
            Event::Delete(name, Some(last), true)
        })
        .collect();
    assert_eq!(tombstones, expected);
    assert_eq!(recorder.state(), on_server);

    running.stop().await;
    server.shutdown().await;
}

on_both_fifos_and_compact!(
    deletions_missed_while_disconnected_arrive_as_tombstones,
    start_paused = true
);
