//! The list and watch paths, on the simulator or on a real server behind the fault proxy:
//! pagination, rewatch after a dropped watch, relist after compaction (with tombstones through
//! a DeltaFifo), bookmark-only progress.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use deltafifo::DeltaType;

/// Page size 3 over 10 objects takes 4 list requests, then a watch; the store
/// equals the server before and after changes.
#[tokio::test(start_paused = true)]
async fn initial_list_is_paginated_then_the_watch_keeps_the_store_equal() {
    let server = TestCluster::start_with_faults().await.unwrap();
    for i in 0..10 {
        server.put_own(&format!("cm-{i}"), "0").await.unwrap();
    }
    server.reset_request_counts();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options().page_size(3));

    own_converged(&server, &*store).await;
    let lists = lw.calls("list");
    assert_eq!(lists.len(), 4, "{lists:?}");
    assert_eq!(lists[0].resource_version.as_deref(), Some("0"));
    assert!(lists.iter().all(|c| c.limit == Some(3)));
    assert!(!lists[0].continue_token && lists[1..].iter().all(|c| c.continue_token));
    // The server rejects a resource version together with a continue token.
    assert!(lists[1..].iter().all(|c| c.resource_version.is_none()));
    assert!(server.request_count("list", "configmaps") >= 4);

    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    let watches = lw.calls("watch");
    assert_eq!(
        watches[0].resource_version.as_deref(),
        Some(running.reflector.last_sync_resource_version().as_str())
    );
    server.put_own("cm-3", "1").await.unwrap();
    server.remove("cm-4").await.unwrap();
    let last = server.put_own("new", "x").await.unwrap();
    own_converged(&server, &*store).await;
    // The reflector's own lists (the checks above list through the proxy too).
    assert_eq!(lw.calls("list").len(), 4, "no relist");
    assert_eq!(
        Some(running.reflector.last_sync_resource_version()),
        last.metadata.resource_version
    );
    assert!(seen.errors.lock().is_empty());
    running.stop().await;
}

/// A dropped watch is reopened from the last resource version, without a list.
#[tokio::test(start_paused = true)]
async fn a_dropped_watch_rewatches_from_the_last_resource_version_without_relisting() {
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching().await;

    // A watch that delivered an event, then dropped.
    server.put_own("b", "0").await.unwrap();
    own_converged(&server, &*store).await;
    let rv = running.reflector.last_sync_resource_version();
    server.drop_watches();
    eventually("a second watch", Duration::from_secs(10), || {
        lw.calls("watch").len() == 2
    })
    .await;
    assert_eq!(
        lw.calls("watch")[1].resource_version.as_deref(),
        Some(rv.as_str())
    );

    // A quiet watch, open for longer than a second, then dropped.
    eventually("the rewatch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.drop_watches();
    eventually("a third watch", Duration::from_secs(10), || {
        lw.calls("watch").len() == 3
    })
    .await;
    assert_eq!(
        lw.calls("watch")[2].resource_version.as_deref(),
        Some(rv.as_str())
    );

    server.put_own("a", "1").await.unwrap();
    server.remove("b").await.unwrap();
    own_converged(&server, &*store).await;
    assert_eq!(lw.calls("list").len(), 1, "no relist");
    assert!(
        seen.backoffs.lock().is_empty(),
        "a normal close costs no backoff"
    );
    assert!(seen.errors.lock().is_empty());
    running.stop().await;
}

/// Makes changes while the watch is down and compacts history before the reflector can
/// rewatch: its watch is held back until then (in the fault proxy on a real server; on the
/// simulator the calls complete without yielding, so the reflector runs only after all of
/// them).
async fn change_while_disconnected(server: &TestCluster) {
    let held = server.hold_watches();
    server.drop_watches();
    server.remove("b").await.unwrap();
    server.put_own("a", "2").await.unwrap();
    server.put_own("d", "0").await.unwrap();
    server.compact().await.unwrap();
    drop(held);
}

/// The reflector's relists after a compaction: exactly one on the simulator; on a real server
/// the fault proxy plays the compaction, and its watch cache may answer a relist at its own
/// latest version of the collection, older than the one compacted to, so the watch from there
/// may expire again before a list from the latest state.
fn assert_relisted_after_expiry(server: &TestCluster, seen: &Seen, lists: usize) {
    let codes: Vec<_> = seen
        .errors
        .lock()
        .iter()
        .map(|e| (e.code, e.reason.clone()))
        .collect();
    let expired = (Some(410), Some("Expired".to_string()));
    if server.sim().is_some() {
        assert_eq!(codes, [expired]);
        assert_eq!(lists, 2);
    } else {
        assert!(
            !codes.is_empty() && codes.iter().all(|code| *code == expired),
            "{codes:?}"
        );
        assert!(lists >= 2, "{lists} lists");
    }
}

/// Plain store: compaction while disconnected → 410 → relist from the last
/// synced resource version; the object deleted in the gap leaves the store.
#[tokio::test(start_paused = true)]
async fn compaction_while_disconnected_relists_and_removes_objects_deleted_in_the_gap() {
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching_objects(&["a", "b", "c"]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rv = running.reflector.last_sync_resource_version();

    change_while_disconnected(&server).await;
    own_converged(&server, &*store).await;

    let lists = lw.calls("list");
    assert_relisted_after_expiry(&server, &seen, lists.len());
    assert_eq!(
        lists[1].resource_version.as_deref(),
        Some(rv.as_str()),
        "relist from the last RV"
    );
    let b = format!("{}/b", ns());
    assert!(store.get_by_key(&b.parse().unwrap()).is_none());
    running.stop().await;
}

/// DeltaFifo fed by an indexer: the object deleted in the gap arrives as a
/// Deleted delta carrying a tombstone.
#[tokio::test(start_paused = true)]
async fn compaction_while_disconnected_delivers_tombstones_through_a_delta_fifo() {
    let server = TestCluster::start_with_faults().await.unwrap();
    for name in ["a", "b", "c"] {
        server.put_own(name, "0").await.unwrap();
    }
    let Pipeline {
        fifo,
        cache,
        log,
        consumer,
    } = Pipeline::start();
    let lw = own_config_maps(server.client().unwrap());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), Arc::new(fifo.clone()), seen.options());
    own_converged(&server, &cache).await;
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    change_while_disconnected(&server).await;
    own_converged(&server, &cache).await;
    eventually("the fifo to drain", Duration::from_secs(10), || {
        fifo.is_empty()
    })
    .await;

    let deletes: Vec<_> = log
        .lock()
        .iter()
        .filter(|(t, _, _)| *t == DeltaType::Deleted)
        .cloned()
        .collect();
    assert_eq!(deletes, [(DeltaType::Deleted, format!("{}/b", ns()), true)]);
    assert_relisted_after_expiry(&server, &seen, lw.calls("list").len());
    running.stop().await;
    fifo.close();
    consumer.await.unwrap();
}

/// Bookmarks alone advance the last synced resource version, so a rewatch after
/// compaction does not 410.
#[tokio::test(start_paused = true)]
async fn bookmarks_advance_the_resource_version_so_a_rewatch_after_compaction_does_not_expire() {
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching().await;

    // History is compacted past the reflector's version; a bookmark at the server's version
    // (no older than the compaction's) reaches the quiet watch.
    bump_global_resource_version(&server).await;
    let compacted = server.compact().await.unwrap();
    assert!(version(&running.reflector.last_sync_resource_version()) < compacted);
    let bookmarked = server.send_bookmarks().await.unwrap();
    assert!(bookmarked >= compacted);
    eventually("the bookmark", Duration::from_secs(10), || {
        version(&running.reflector.last_sync_resource_version()) >= bookmarked
    })
    .await;

    let target = running.reflector.last_sync_resource_version();
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.drop_watches();
    eventually("the rewatch", Duration::from_secs(10), || {
        lw.calls("watch").len() == 2
    })
    .await;
    let rewatched = lw.calls("watch")[1].resource_version.clone().unwrap();
    assert!(
        version(&rewatched) >= version(&target),
        "{rewatched} < {target}"
    );
    server.put_own("b", "0").await.unwrap();
    own_converged(&server, &*store).await;
    assert!(
        seen.errors.lock().is_empty(),
        "no 410: {:?}",
        seen.errors.lock()
    );
    assert_eq!(lw.calls("list").len(), 1, "no relist");
    running.stop().await;
}

/// The control for the bookmark test above: without the bookmark, the same rewatch expires and relists.
#[tokio::test(start_paused = true)]
async fn without_bookmarks_the_same_rewatch_expires_and_relists() {
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching().await;

    bump_global_resource_version(&server).await;
    server.compact().await.unwrap();
    // Long-lived enough that its end is a normal close, not a failure to back off from.
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.drop_watches();
    eventually("the relist", Duration::from_secs(10), || {
        lw.calls("list").len() == 2
    })
    .await;
    own_converged(&server, &*store).await;
    let codes = seen.codes();
    if server.sim().is_some() {
        assert_eq!(codes, [Some(410)]);
    } else {
        // The fault proxy plays the compaction: a real server's watch cache may answer the
        // relist at its own latest version of the collection, older than the one compacted
        // to, and the watch from there expires once more before a list from the latest state.
        assert!(
            !codes.is_empty() && codes.iter().all(|code| *code == Some(410)),
            "{codes:?}"
        );
    }
    running.stop().await;
}
