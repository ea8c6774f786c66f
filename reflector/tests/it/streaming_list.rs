//! Streaming lists reach the same state as paginated lists, start from the last
//! synced resource version, and fall back to a paginated list on servers that reject or
//! ignore `sendInitialEvents`.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{FailRule, WatchListMode};
use common::*;
use deltafifo::DeltaType;
use reflector::ReflectorOptions;

#[tokio::test(start_paused = true)]
async fn streaming_list_reaches_the_same_state_as_list_mode() {
    let server = TestCluster::start().await.unwrap();
    for i in 0..10 {
        server.put(&format!("cm-{i}"), "0").await.unwrap();
    }
    let listing = config_maps(server.client().unwrap());
    let streaming = config_maps(server.client().unwrap());
    let (list_store, stream_store) = (Arc::new(cache()), Arc::new(cache()));
    let seen = Arc::new(Seen::default());
    let by_list = spawn(
        listing.clone(),
        list_store.clone(),
        seen.options().page_size(3),
    );
    let by_stream = spawn(
        streaming.clone(),
        stream_store.clone(),
        seen.options().streaming_list(true),
    );
    converged(&server, &*list_store).await;
    converged(&server, &*stream_store).await;

    server.put("cm-1", "1").await.unwrap();
    server.remove("cm-2").await.unwrap();
    server.put("new", "0").await.unwrap();
    converged(&server, &*list_store).await;
    converged(&server, &*stream_store).await;
    assert_eq!(store_state(&*list_store), store_state(&*stream_store));

    // The streaming reflector never listed; its one watch asked for the initial events from
    // the latest state ("": nothing synced yet) and went on as the steady-state watch.
    assert!(streaming.calls("list").is_empty());
    let watches = streaming.calls("watch");
    assert_eq!(watches.len(), 1, "{watches:?}");
    assert!(watches[0].send_initial_events);
    assert_eq!(watches[0].resource_version.as_deref(), Some(""));
    // A real server's version also moves with writes elsewhere (its own Leases).
    if let Some(sim) = server.sim() {
        assert_eq!(
            by_stream.reflector.last_sync_resource_version(),
            sim.resource_version().to_string()
        );
    }
    assert!(seen.errors.lock().is_empty(), "{:?}", seen.errors.lock());
    by_list.stop().await;
    by_stream.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_relist_streams_from_the_last_synced_resource_version() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(
        lw.clone(),
        store.clone(),
        seen.options().streaming_list(true),
    );
    own_converged(&server, &*store).await;

    // A plain rewatch after a normal close, then an in-band 410 that forces a relist.
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.put_own("b", "0").await.unwrap();
    own_converged(&server, &*store).await;
    let rv = running.reflector.last_sync_resource_version();
    server
        .inject(FailRule::new("watch", "configmaps", 410, 1).in_band())
        .unwrap();
    server.drop_watches();
    eventually("the streaming relist", Duration::from_secs(30), || {
        lw.calls("watch").len() == 3
    })
    .await;
    server.put_own("c", "0").await.unwrap();
    own_converged(&server, &*store).await;

    let watches = lw.calls("watch");
    assert!(
        !watches[1].send_initial_events,
        "a rewatch is a plain watch"
    );
    assert!(watches[2].send_initial_events);
    // The rewatch's version is the last synced one (a real server's own bookmarks may have
    // moved it past `rv`), and the relist streams from it, never from "0".
    let rewatched = watches[1].resource_version.clone().unwrap();
    assert!(version(&rewatched) >= version(&rv), "{rewatched} < {rv}");
    assert_eq!(watches[2].resource_version, Some(rewatched), "never \"0\"");
    assert!(lw.calls("list").is_empty());
    assert_eq!(seen.codes(), [Some(410)]);
    running.stop().await;
}

/// A server that refuses `sendInitialEvents` (422, as with the WatchList feature off) gets a
/// paginated list in the same attempt, and the refusal is remembered: a later relist pages at
/// once instead of asking again.
#[tokio::test(start_paused = true)]
async fn a_server_rejecting_streaming_lists_gets_a_paginated_list_at_once_and_for_later_relists() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.set_watch_list_mode(WatchListMode::Rejected);
    server.put_own("a", "0").await.unwrap();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(
        lw.clone(),
        store.clone(),
        seen.options().streaming_list(true),
    );
    own_converged(&server, &*store).await;

    assert_eq!(lw.calls("list").len(), 1);
    assert!(
        seen.backoffs.lock().is_empty(),
        "the fallback costs no backoff"
    );
    assert_eq!(seen.codes(), [Some(422)]);
    server.put_own("b", "0").await.unwrap();
    own_converged(&server, &*store).await;

    // An in-band 410 ends the attempt: the relist pages without another streaming list.
    tokio::time::sleep(Duration::from_secs(2)).await;
    server
        .inject(FailRule::new("watch", "configmaps", 410, 1).in_band())
        .unwrap();
    server.drop_watches();
    eventually("the relist", Duration::from_secs(30), || {
        lw.calls("list").len() == 2
    })
    .await;
    server.put_own("c", "0").await.unwrap();
    own_converged(&server, &*store).await;
    let streaming = lw.calls("watch");
    let streaming: Vec<_> = streaming.iter().filter(|w| w.send_initial_events).collect();
    assert_eq!(streaming.len(), 1, "asked once: {streaming:?}");
    assert_eq!(seen.codes(), [Some(422), Some(410)]);
    running.stop().await;
}

/// A streaming list that fails for a reason a supporting server can also have (here a 500)
/// falls back to a paginated list for that attempt only: the next relist streams again.
#[tokio::test(start_paused = true)]
async fn a_transient_streaming_list_failure_falls_back_for_one_attempt_only() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    server
        .inject(FailRule::new("watch", "configmaps", 500, 1))
        .unwrap();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(
        lw.clone(),
        store.clone(),
        seen.options().streaming_list(true),
    );
    own_converged(&server, &*store).await;
    assert_eq!(lw.calls("list").len(), 1, "the fallback");

    tokio::time::sleep(Duration::from_secs(2)).await;
    server
        .inject(FailRule::new("watch", "configmaps", 410, 1).in_band())
        .unwrap();
    server.drop_watches();
    eventually("the streaming relist", Duration::from_secs(30), || {
        lw.calls("watch").len() == 4
    })
    .await;
    server.put_own("b", "0").await.unwrap();
    own_converged(&server, &*store).await;

    let streaming: Vec<_> = lw
        .calls("watch")
        .iter()
        .map(|w| w.send_initial_events)
        .collect();
    // Streaming list (500), the fallback's watch, its rewatch (410), the streaming relist.
    assert_eq!(streaming, [true, false, false, true]);
    assert_eq!(lw.calls("list").len(), 1, "the relist streamed");
    assert_eq!(seen.codes(), [Some(500), Some(410)]);
    running.stop().await;
}

/// client-go's InformerResourceVersion: the last synced resource version follows the
/// bookmarks of the stream a streaming list goes on watching with, not only object events, so
/// writes elsewhere on the server move it without any event of this collection.
#[tokio::test(start_paused = true)]
async fn bookmarks_after_a_streaming_list_advance_the_last_synced_resource_version() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let running = spawn(lw.clone(), store.clone(), ReflectorOptions::default());
    own_converged(&server, &*store).await;
    let listed = running.reflector.last_sync_resource_version();
    if let Some(sim) = server.sim() {
        assert_eq!(listed, sim.resource_version().to_string());
    }

    bump_global_resource_version(&server).await;
    let bookmarked = server.send_bookmarks().await.unwrap();
    assert!(bookmarked > version(&listed), "the server moved on");
    // No event of the collection: only the bookmark takes the version there.
    eventually("the bookmark", Duration::from_secs(10), || {
        version(&running.reflector.last_sync_resource_version()) >= bookmarked
    })
    .await;

    own_converged(&server, &*store).await;
    assert_eq!(
        lw.calls("watch").len(),
        1,
        "the streaming list's own stream"
    );
    assert!(lw.calls("watch")[0].send_initial_events);
    assert!(lw.calls("list").is_empty());
    running.stop().await;
}

/// The synthetic ADDED events arrive, the end bookmark never does: after the silence timeout
/// the reflector lists, with no backoff step in between.
#[tokio::test(start_paused = true)]
async fn a_server_ignoring_streaming_lists_falls_back_to_a_list_within_one_backoff_step() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.set_watch_list_mode(WatchListMode::Ignored);
    for i in 0..5 {
        server.put_own(&format!("cm-{i}"), "0").await.unwrap();
    }
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let silence = Duration::from_secs(1);
    let running = spawn(
        lw.clone(),
        store.clone(),
        seen.options()
            .streaming_list(true)
            .initial_events_timeout(silence),
    );
    own_converged(&server, &*store).await;
    eventually("the fallback list", Duration::from_secs(30), || {
        !lw.calls("list").is_empty()
    })
    .await;

    let lists = lw.calls("list");
    assert_eq!(
        lists.len(),
        1,
        "{:?} {:?}",
        lw.calls.lock(),
        seen.errors.lock()
    );
    let first_watch = &lw.calls("watch")[0];
    assert!(first_watch.send_initial_events);
    if server.sim().is_some() {
        let waited = lists[0].at - first_watch.at;
        assert!(waited <= silence * 2, "fell back after {waited:?}");
    }
    assert!(seen.backoffs.lock().is_empty());
    assert_eq!(seen.errors.lock().len(), 1);
    assert!(
        seen.errors.lock()[0]
            .text
            .contains("streaming list incomplete")
    );

    server.put_own("cm-0", "1").await.unwrap();
    server.remove("cm-1").await.unwrap();
    own_converged(&server, &*store).await;
    assert_eq!(lw.calls("list").len(), 1);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_stream_ending_before_the_end_bookmark_falls_back_to_a_list() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.set_watch_list_mode(WatchListMode::Ignored);
    server.put_own("a", "0").await.unwrap();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(
        lw.clone(),
        store.clone(),
        seen.options().streaming_list(true),
    );
    eventually("the streaming watch", Duration::from_secs(5), || {
        server.open_watches() == 1
    })
    .await;
    server.drop_watches();
    own_converged(&server, &*store).await;
    eventually("the fallback list", Duration::from_secs(30), || {
        !lw.calls("list").is_empty()
    })
    .await;
    assert_eq!(
        lw.calls("list").len(),
        1,
        "{:?} {:?}",
        lw.calls.lock(),
        seen.errors.lock()
    );
    assert!(seen.backoffs.lock().is_empty(), "{:?}", seen.errors.lock());

    if server.sim().is_some() {
        let waited = lw.calls("list")[0].at - lw.calls("watch")[0].at;
        assert!(
            waited < Duration::from_secs(5),
            "did not wait for the silence timeout"
        );
    }
    assert!(seen.backoffs.lock().is_empty());
    // Its end, not the silence timeout, ended the attempt.
    assert!(
        seen.errors.lock()[0]
            .text
            .contains("ended before the initial-events-end")
    );
    running.stop().await;
}

/// The initial events are collected and applied with one `replace`: through a `DeltaFifo`
/// (which reports a replace's objects as `Replaced`) they arrive as `Replaced`, never `Added`;
/// only later changes are `Added`.
#[tokio::test(start_paused = true)]
async fn initial_events_reach_the_store_as_one_replace() {
    let server = TestCluster::start().await.unwrap();
    for i in 0..5 {
        server.put_own(&format!("cm-{i}"), "0").await.unwrap();
    }
    let pipeline = Pipeline::start();
    let lw = own_config_maps(server.client().unwrap());
    let running = spawn(
        lw.clone(),
        Arc::new(pipeline.fifo.clone()),
        ReflectorOptions::default().streaming_list(true),
    );
    own_converged(&server, &pipeline.cache).await;
    eventually("the fifo to sync", Duration::from_secs(10), || {
        pipeline.fifo.has_synced()
    })
    .await;
    let types: Vec<_> = pipeline.log.lock().iter().map(|(t, _, _)| *t).collect();
    assert_eq!(types, [DeltaType::Replaced; 5]);

    server.put_own("new", "0").await.unwrap();
    own_converged(&server, &pipeline.cache).await;
    let last = pipeline.log.lock().last().cloned();
    assert_eq!(
        last,
        Some((DeltaType::Added, format!("{}/new", ns()), false))
    );
    assert!(lw.calls("list").is_empty());
    running.stop().await;
    pipeline.stop().await;
}
