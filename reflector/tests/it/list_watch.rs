//! The list and watch paths against apiserver-sim: pagination, rewatch after a dropped watch,
//! relist after compaction (with tombstones through a DeltaFifo), bookmark-only progress.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::ApiServer;
use common::*;
use deltafifo::DeltaType;

/// Page size 3 over 10 objects takes 4 list requests, then a watch; the store
/// equals the server before and after changes.
#[tokio::test(start_paused = true)]
async fn initial_list_is_paginated_then_the_watch_keeps_the_store_equal() {
    if testkit::cluster::sim_only("virtual time, request counts and open watches") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    for i in 0..10 {
        put(&server, &format!("cm-{i}"), "0");
    }
    let lw = config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options().page_size(3));

    converged(&server, &*store).await;
    let lists = lw.calls("list");
    assert_eq!(lists.len(), 4, "{lists:?}");
    assert_eq!(lists[0].resource_version.as_deref(), Some("0"));
    assert!(lists.iter().all(|c| c.limit == Some(3)));
    assert!(!lists[0].continue_token && lists[1..].iter().all(|c| c.continue_token));
    // The server rejects a resource version together with a continue token.
    assert!(lists[1..].iter().all(|c| c.resource_version.is_none()));
    assert_eq!(server.request_count("list", "configmaps"), 4);

    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    let watches = lw.calls("watch");
    assert_eq!(
        watches[0].resource_version.as_deref(),
        Some(running.reflector.last_sync_resource_version().as_str())
    );
    put(&server, "cm-3", "1");
    remove(&server, "cm-4");
    put(&server, "new", "x");
    converged(&server, &*store).await;
    assert_eq!(server.request_count("list", "configmaps"), 4, "no relist");
    assert_eq!(
        running.reflector.last_sync_resource_version(),
        server.resource_version().to_string()
    );
    assert!(seen.errors.lock().is_empty());
    running.stop().await;
}

/// A dropped watch is reopened from the last resource version, without a list.
#[tokio::test(start_paused = true)]
async fn a_dropped_watch_rewatches_from_the_last_resource_version_without_relisting() {
    if testkit::cluster::sim_only("virtual time, fault injection, request counts and open watches")
    {
        return;
    }
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching().await;

    // A watch that delivered an event, then dropped.
    put(&server, "b", "0");
    converged(&server, &*store).await;
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

    put(&server, "a", "1");
    remove(&server, "b");
    converged(&server, &*store).await;
    assert_eq!(server.request_count("list", "configmaps"), 1, "no relist");
    assert_eq!(lw.calls("list").len(), 1);
    assert!(
        seen.backoffs.lock().is_empty(),
        "a normal close costs no backoff"
    );
    assert!(seen.errors.lock().is_empty());
    running.stop().await;
}

/// Makes changes while the watch is down and compacts history before the reflector can
/// rewatch. The calls are synchronous, so on this single-threaded runtime the reflector runs
/// only after all of them.
fn change_while_disconnected(server: &ApiServer) {
    server.drop_watches();
    remove(server, "b");
    put(server, "a", "2");
    put(server, "d", "0");
    server.compact();
}

/// Plain store: compaction while disconnected → 410 → relist from the last
/// synced resource version; the object deleted in the gap leaves the store.
#[tokio::test(start_paused = true)]
async fn compaction_while_disconnected_relists_and_removes_objects_deleted_in_the_gap() {
    if testkit::cluster::sim_only("virtual time, request counts and open watches") {
        return;
    }
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching_objects(&["a", "b", "c"]).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rv = running.reflector.last_sync_resource_version();

    change_while_disconnected(&server);
    converged(&server, &*store).await;

    let codes: Vec<_> = seen
        .errors
        .lock()
        .iter()
        .map(|e| (e.code, e.reason.clone()))
        .collect();
    assert_eq!(codes, [(Some(410), Some("Expired".to_string()))]);
    let lists = lw.calls("list");
    assert_eq!(lists.len(), 2);
    assert_eq!(
        lists[1].resource_version.as_deref(),
        Some(rv.as_str()),
        "relist from the last RV"
    );
    assert_eq!(server.request_count("list", "configmaps"), 2);
    assert!(store.get_by_key(&"default/b".parse().unwrap()).is_none());
    running.stop().await;
}

/// DeltaFifo fed by an indexer: the object deleted in the gap arrives as a
/// Deleted delta carrying a tombstone.
#[tokio::test(start_paused = true)]
async fn compaction_while_disconnected_delivers_tombstones_through_a_delta_fifo() {
    if testkit::cluster::sim_only("virtual time, request counts and open watches") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    for name in ["a", "b", "c"] {
        put(&server, name, "0");
    }
    let Pipeline {
        fifo,
        cache,
        log,
        consumer,
    } = Pipeline::start();
    let lw = config_maps(server.client().unwrap());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), Arc::new(fifo.clone()), seen.options());
    converged(&server, &cache).await;
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    change_while_disconnected(&server);
    converged(&server, &cache).await;
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
    assert_eq!(
        deletes,
        [(DeltaType::Deleted, "default/b".to_string(), true)]
    );
    assert_eq!(lw.calls("list").len(), 2);
    running.stop().await;
    fifo.close();
    consumer.await.unwrap();
}

/// Bookmarks alone advance the last synced resource version, so a rewatch after
/// compaction does not 410.
#[tokio::test(start_paused = true)]
async fn bookmarks_advance_the_resource_version_so_a_rewatch_after_compaction_does_not_expire() {
    if testkit::cluster::sim_only(
        "virtual time, fault injection, request counts and open watches, bookmarks on demand",
    ) {
        return;
    }
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching().await;

    bump_global_resource_version(&server);
    let target = server.resource_version().to_string();
    assert_ne!(running.reflector.last_sync_resource_version(), target);
    server.send_bookmarks();
    eventually("the bookmark", Duration::from_secs(10), || {
        running.reflector.last_sync_resource_version() == target
    })
    .await;

    server.compact();
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.drop_watches();
    eventually("the rewatch", Duration::from_secs(10), || {
        lw.calls("watch").len() == 2
    })
    .await;
    assert_eq!(
        lw.calls("watch")[1].resource_version.as_deref(),
        Some(target.as_str())
    );
    put(&server, "b", "0");
    converged(&server, &*store).await;
    assert!(
        seen.errors.lock().is_empty(),
        "no 410: {:?}",
        seen.errors.lock()
    );
    assert_eq!(server.request_count("list", "configmaps"), 1, "no relist");
    running.stop().await;
}

/// The control for the bookmark test above: without the bookmark, the same rewatch expires and relists.
#[tokio::test(start_paused = true)]
async fn without_bookmarks_the_same_rewatch_expires_and_relists() {
    if testkit::cluster::sim_only("virtual time, fault injection") {
        return;
    }
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching().await;

    bump_global_resource_version(&server);
    server.compact();
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.drop_watches();
    eventually("the relist", Duration::from_secs(10), || {
        lw.calls("list").len() == 2
    })
    .await;
    converged(&server, &*store).await;
    assert_eq!(seen.codes(), [Some(410)]);
    running.stop().await;
}
