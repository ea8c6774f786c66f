//! With a 1 s handler resync and paused time, resync updates reach only that
//! handler, with old == new.

use crate::common;

use std::time::Duration;

use common::*;
use informer::FifoKind;

async fn resync_updates_reach_only_the_handler_that_asked<O: TestObject>(kind: FifoKind) {
    let server = TestCluster::start().await.unwrap();
    for i in 0..3 {
        server.put_own(&format!("cm-{i}"), "0").await.unwrap();
    }
    // The informer checks every 10 s by default; the handler's 1 s request lowers that before start.
    let informer = config_map_informer::<O>(&server, Duration::from_secs(10), kind);
    let resyncing = Recorder::new("resyncing");
    let quiet = Recorder::new("quiet");
    informer
        .add_event_handler_with_resync(resyncing.clone(), Duration::from_secs(1))
        .unwrap();
    informer
        .add_event_handler_with_resync(quiet.clone(), Duration::ZERO)
        .unwrap();
    let running = spawn(&informer);
    informer.synced().await;
    let started = tokio::time::Instant::now();

    eventually("three rounds of resync", Duration::from_secs(60), || {
        resyncing.len() >= 3 + 3 * 3
    })
    .await;
    // Three rounds need at least two more seconds after the first.
    assert!(started.elapsed() >= Duration::from_secs(2));
    let events = resyncing.events();
    assert!(
        events[..3]
            .iter()
            .all(|event| matches!(event, Event::Add(_, _, true)))
    );
    for event in &events[3..] {
        // The cached object itself, re-delivered: old and new are the same `Arc`.
        assert!(
            matches!(event, Event::Update(_, old, new, true) if old == new),
            "{event:?}"
        );
    }
    assert_eq!(
        quiet.len(),
        3,
        "the handler without resync only saw the initial list"
    );
    assert!(
        quiet
            .events()
            .iter()
            .all(|event| matches!(event, Event::Add(_, _, true)))
    );

    // A real change still reaches both.
    server.put_own("cm-0", "1").await.unwrap();
    eventually("the change", Duration::from_secs(30), || quiet.len() == 4).await;
    assert!(
        matches!(&quiet.events()[3], Event::Update(name, old, new, false) if name == "cm-0" && old != new)
    );

    running.stop().await;
    server.shutdown().await;
}

on_both_fifos_and_compact!(
    resync_updates_reach_only_the_handler_that_asked,
    start_paused = true
);
