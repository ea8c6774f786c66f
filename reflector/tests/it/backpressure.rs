//! A store that asks for room (a bounded `DeltaFifo` whose consumer fell behind) makes the
//! reflector stop reading its watch, or taking the next page of a list, until there is room; and
//! nothing is lost or reordered.

use crate::common;
use crate::events::Injector;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use deltafifo::{DeltaFifo, DeltaFifoOptions};
use k8s_openapi::api::core::v1::ConfigMap;
use reflector::{ReflectorOptions, WatchEvent};

const EVENTS: usize = 20;
const BOUND: usize = 4;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_waits_while_the_fifo_is_over_its_bound_and_loses_nothing() {
    let server = TestCluster::start().await.unwrap();
    let events = (0..EVENTS)
        .map(|i| Ok(WatchEvent::Added(cm(&format!("b-{i:02}"), "0"))))
        .collect();
    let lister_watcher = Arc::new(Injector {
        // The real watch behind the injected events: only the test's own objects (none).
        inner: own_config_maps(server.client().unwrap()),
        bad: parking_lot::Mutex::new(events),
    });
    let fifo: DeltaFifo<ConfigMap> = DeltaFifo::new(DeltaFifoOptions::new().backlog_limit(BOUND));
    let running = spawn(
        lister_watcher,
        Arc::new(fifo.clone()),
        // The steady-state watch: a streaming list's initial events go to a buffer first.
        ReflectorOptions::default().streaming_list(false),
    );

    // No consumer yet, and every event is a key of its own: the reflector writes until the
    // fifo is over its bound, then waits.
    eventually("the bound reached", Duration::from_secs(10), || {
        fifo.len() == BOUND + 1
    })
    .await;
    for _ in 0..1_000 {
        tokio::task::yield_now().await;
    }
    assert_eq!(fifo.len(), BOUND + 1, "read past the bound");

    // A consumer drains it: every event arrives, in order.
    let mut popped = Vec::new();
    while popped.len() < EVENTS {
        let name = fifo
            .pop(|deltas, _| deltas.key().to_string())
            .await
            .unwrap();
        popped.push(name);
    }
    let expected: Vec<String> = (0..EVENTS).map(|i| format!("{}/b-{i:02}", ns())).collect();
    assert_eq!(popped, expected);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paged_list_takes_the_next_page_only_when_the_fifo_has_room() {
    // Not a multiple of the page: a real server may end a list whose last page is full with a
    // continue token and one more, empty page.
    const OBJECTS: usize = 25;
    const PAGE: usize = 10;
    let server = TestCluster::start().await.unwrap();
    for i in 0..OBJECTS {
        server.put_own(&format!("c-{i:02}"), "0").await.unwrap();
    }
    // The test's own objects only, so that the pages hold exactly them.
    let lw = own_config_maps(server.client().unwrap());
    let fifo: DeltaFifo<ConfigMap> = DeltaFifo::new(DeltaFifoOptions::new().backlog_limit(BOUND));
    let running = spawn(
        lw.clone(),
        Arc::new(fifo.clone()),
        ReflectorOptions::default()
            .streaming_list(false)
            .page_size(PAGE as u32),
    );

    // The first page goes in whole; the second is fetched (one page ahead) but waits.
    eventually("the first page", Duration::from_secs(10), || {
        fifo.len() == PAGE && lw.calls("list").len() == 2
    })
    .await;
    for _ in 0..1_000 {
        tokio::task::yield_now().await;
    }
    assert_eq!(fifo.len(), PAGE, "a page went in without room");

    // Popped, the rest of the list follows, and the fifo syncs with every object.
    for _ in 0..OBJECTS {
        fifo.pop(|_, _| ()).await.unwrap();
    }
    eventually("synced", Duration::from_secs(10), || fifo.has_synced()).await;
    assert!(fifo.is_empty());
    assert_eq!(lw.calls("list").len(), OBJECTS.div_ceil(PAGE));
    running.stop().await;
}
