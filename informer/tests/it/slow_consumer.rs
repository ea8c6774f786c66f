//! With an in-order fifo, nothing the informer does after the fifo holds up the reflector: not
//! a stuck cache write (an index function waiting on a gate), not a stuck handler. The
//! reflector reads every event meanwhile, the cache catches up once the gate opens, and the
//! handler once it is let go. (A delta fifo would hold a delete, a relist or a resync until
//! the stuck processing returns: its consumer reads the fifo's view of the cache.)

use crate::common;

use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use std::collections::BTreeSet;

use common::*;
use informer::{ApiListerWatcher, FifoKind, Indexers, SharedIndexInformer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

/// Writes while the cache write of `slow-0` waits for the test: creates, updates and deletes.
const WRITES: usize = 300;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_stuck_cache_write_and_a_stuck_handler_hold_up_no_watch_event() {
    let server = TestCluster::start().await.unwrap();
    let mut exists = BTreeSet::new();
    for i in 0..20 {
        let name = format!("cm-{i}");
        server.put_own(&name, "0").await.unwrap();
        exists.insert(name);
    }
    // The index function of `slow-*` objects waits until the test drops `open`.
    let (open, gate) = mpsc::channel::<()>();
    let gate = Arc::new(Mutex::new(gate));
    let gated = Indexers::new()
        .with_namespace()
        .with("gated", move |cm: &ConfigMap| {
            if name(cm).starts_with("slow-") {
                let gate = gate.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = gate.recv();
            }
            Vec::new()
        });
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    let own = ApiListerWatcher::new(api).labels(OWN_SELECTOR);
    let informer = Arc::new(
        SharedIndexInformer::builder(Arc::new(own))
            .indexers(gated)
            .fifo(FifoKind::InOrder)
            .build(),
    );
    let (stuck, let_go) = Recorder::new("stuck").gated();
    informer.add_event_handler(stuck.clone()).unwrap();
    let running = spawn(&informer);
    informer.synced().await;

    // From here the informer's processing waits inside the cache write of `slow-0`.
    server.put_own("slow-0", "0").await.unwrap();
    for step in 0..WRITES {
        let name = format!("cm-{}", step % 40);
        if step % 7 == 3 && exists.remove(&name) {
            server.remove(&name).await.unwrap();
        } else {
            server.put_own(&name, &step.to_string()).await.unwrap();
            exists.insert(name);
        }
    }
    let last = rv(&server.put_own("last", "0").await.unwrap());
    // A real server also sends bookmarks of its own now and then: a version at least `last`.
    let reached = |have: String| !have.is_empty() && version(&have) >= version(&last);
    // The reflector has read (and written into the fifo) every event up to the last write,
    // though the cache is stuck before all of them. (The cache is not read here: its write
    // lock is held by the stuck write.)
    eventually(
        "the reflector read every event",
        Duration::from_secs(60),
        || reached(informer.last_sync_resource_version()),
    )
    .await;
    assert!(!reached(informer.last_store_sync_resource_version()));

    drop(open);
    let expected = server.own_state().await.unwrap();
    eventually("the cache caught up", Duration::from_secs(60), || {
        cache_state(&informer) == expected
    })
    .await;
    assert!(reached(informer.last_store_sync_resource_version()));
    assert!(
        stuck.is_empty(),
        "the stuck handler has returned from nothing"
    );

    let_go.add_permits(usize::MAX >> 4);
    eventually("the handler caught up", Duration::from_secs(60), || {
        stuck.state() == expected
    })
    .await;
    running.stop().await;
    server.shutdown().await;
}
