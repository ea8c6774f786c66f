//! A handler added after 1 000 objects synced gets exactly 1 000 initial adds, then
//! live events; its registration syncs only once those adds have returned.

use crate::common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use informer::FifoKind;

async fn a_late_handler_gets_the_cache_then_live_events<O: TestObject>(kind: FifoKind) {
    let server = TestCluster::start().await.unwrap();
    for i in 0..1000 {
        server.put_own(&format!("cm-{i}"), "0").await.unwrap();
    }
    let informer = config_map_informer::<O>(&server, Duration::ZERO, kind);
    let early = Recorder::new("early");
    informer.add_event_handler(early.clone()).unwrap();
    let running = spawn(&informer);
    informer.synced().await;
    assert_eq!(informer.cache_size(), 1000);

    let (late, gate) = Recorder::new("late").gated();
    let registration = informer.add_event_handler(late.clone()).unwrap();
    assert_eq!(registration.handler_name(), "late");
    // Live changes right after joining.
    for i in 0..10 {
        server.put_own(&format!("cm-{i}"), "1").await.unwrap();
        server.put_own(&format!("new-{i}"), "1").await.unwrap();
        server.remove(&format!("cm-{}", 500 + i)).await.unwrap();
    }
    eventually(
        "the early handler saw the live changes",
        Duration::from_secs(30),
        || early.len() == 1030,
    )
    .await;

    // Every initial add but the last has returned: not synced yet.
    gate.add_permits(999);
    eventually("999 initial adds", Duration::from_secs(30), || {
        late.len() == 999
    })
    .await;
    assert!(informer.has_synced());
    assert!(!registration.has_synced());
    gate.add_permits(1);
    tokio::time::timeout(Duration::from_secs(30), registration.synced())
        .await
        .unwrap();
    assert!(registration.has_synced());
    gate.add_permits(30);
    eventually(
        "the late handler saw the live changes",
        Duration::from_secs(30),
        || late.len() == 1030,
    )
    .await;

    let seeded: std::collections::BTreeMap<String, String> = early.events()[..1000]
        .iter()
        .map(|event| match event {
            Event::Add(name, rv, true) => (name.clone(), rv.clone()),
            other => panic!("expected an initial add, got {other:?}"),
        })
        .collect();
    let events = late.events();
    let (initial, rest) = events.split_at(1000);
    let initial_names: BTreeSet<String> = initial
        .iter()
        .map(|event| match event {
            Event::Add(name, rv, true) => {
                assert_eq!(Some(rv), seeded.get(name));
                name.clone()
            }
            other => panic!("expected an initial add, got {other:?}"),
        })
        .collect();
    assert_eq!(
        initial_names,
        (0..1000).map(|i| format!("cm-{i}")).collect()
    );
    // The live part is exactly what the early handler saw after its initial list: no gap, no
    // duplicate.
    assert_eq!(rest, &early.events()[1000..]);
    assert!(
        rest.iter()
            .all(|event| !matches!(event, Event::Add(_, _, true)))
    );
    assert_eq!(late.state(), server.own_state().await.unwrap());
    assert_eq!(cache_state(&informer), server.own_state().await.unwrap());

    running.stop().await;
    server.shutdown().await;
}

on_both_fifos_and_compact!(
    a_late_handler_gets_the_cache_then_live_events,
    start_paused = true
);
