//! Event handling: bad objects are skipped, store errors are reported and relist, and resync
//! runs on its timer (a failing resync relists; none by default). The list and watch rules are
//! in `list_watch_rules`.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use futures::StreamExt;
use indexer::{Indexer, ObjectKey, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use reflector::{
    Error, ListParams, ListerWatcher, ObjectList, WatchEvent, WatchParams, WatchStream,
};

/// A lister-watcher that puts bad items in front of its first watch stream.
pub(crate) struct Injector {
    pub(crate) inner: Arc<dyn ListerWatcher<ConfigMap>>,
    pub(crate) bad: parking_lot::Mutex<Vec<Result<WatchEvent<ConfigMap>, Error>>>,
}

#[async_trait::async_trait]
impl ListerWatcher<ConfigMap> for Injector {
    async fn list(&self, params: &ListParams) -> Result<ObjectList<ConfigMap>, Error> {
        self.inner.list(params).await
    }

    async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<ConfigMap>, Error> {
        let stream = self.inner.watch(params, resource_version).await?;
        let bad = std::mem::take(&mut *self.bad.lock());
        Ok(futures::stream::iter(bad).chain(stream).boxed())
    }
}

#[tokio::test(start_paused = true)]
async fn objects_without_a_name_or_that_fail_to_decode_are_reported_and_skipped() {
    let server = TestCluster::start().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let decode_error = serde_json::from_str::<ConfigMap>("{\"data\": 5}").unwrap_err();
    let lists = own_config_maps(server.client().unwrap());
    let injector = Arc::new(Injector {
        inner: lists.clone(),
        bad: parking_lot::Mutex::new(vec![
            Ok(WatchEvent::Added(ConfigMap::default())),
            Err(Error::Decode {
                source: kube::Error::SerdeError(decode_error),
            }),
        ]),
    });
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(injector, store.clone(), seen.options());
    own_converged(&server, &*store).await;
    eventually("both reports", Duration::from_secs(10), || {
        seen.errors.lock().len() == 2
    })
    .await;
    server.put_own("b", "0").await.unwrap();
    own_converged(&server, &*store).await;

    let texts: Vec<_> = seen.errors.lock().iter().map(|e| e.text.clone()).collect();
    assert!(texts[0].contains("no usable store key"), "{texts:?}");
    assert!(texts[1].contains("does not decode"), "{texts:?}");
    assert_eq!(lists.calls("list").len(), 1, "skips do not relist");
    running.stop().await;
}

/// An indexer that counts resyncs, can fail them, and refuses objects named "poison".
pub(crate) struct FlakyStore {
    pub(crate) inner: Indexer<ConfigMap>,
    pub(crate) resyncs: AtomicUsize,
    pub(crate) fail_resync: AtomicBool,
}

impl Store<ConfigMap> for FlakyStore {
    fn add(&self, obj: Arc<ConfigMap>) -> Result<(), indexer::Error> {
        if obj.metadata.name.as_deref() == Some("poison") {
            return Err(indexer::Error::Rejected {
                key: "default/poison".into(),
                source: "refused by the test".into(),
            });
        }
        self.inner.add(obj)
    }
    fn update(&self, obj: Arc<ConfigMap>) -> Result<(), indexer::Error> {
        self.inner.update(obj)
    }
    fn delete(&self, obj: Arc<ConfigMap>) -> Result<(), indexer::Error> {
        self.inner.delete(obj)
    }
    fn replace(&self, objs: Vec<Arc<ConfigMap>>, rv: String) -> Result<(), indexer::Error> {
        self.inner.replace(objs, rv)
    }
    fn resync(&self) -> Result<(), indexer::Error> {
        self.resyncs.fetch_add(1, Ordering::SeqCst);
        if self.fail_resync.load(Ordering::SeqCst) {
            return Err(indexer::Error::UnknownIndex(
                "resync refused by the test".into(),
            ));
        }
        Ok(())
    }
    fn get_by_key(&self, key: &ObjectKey) -> Option<Arc<ConfigMap>> {
        self.inner.get_by_key(key)
    }
    fn list(&self) -> Vec<Arc<ConfigMap>> {
        self.inner.list()
    }
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.inner.list_keys()
    }
}

#[tokio::test(start_paused = true)]
async fn resync_runs_on_its_period_and_a_failing_resync_relists() {
    if testkit::cluster::sim_only("virtual time (95 s of a 30 s resync period)") {
        return;
    }
    let server = TestCluster::start().await.unwrap();
    server.put("a", "0").await.unwrap();
    let lw = config_maps(server.client().unwrap());
    let store = Arc::new(FlakyStore {
        inner: cache(),
        resyncs: AtomicUsize::new(0),
        fail_resync: AtomicBool::new(false),
    });
    let seen = Arc::new(Seen::default());
    let options = seen.options().resync_period(Duration::from_secs(30));
    let running = spawn(lw.clone(), store.clone(), options);
    converged(&server, &*store).await;
    tokio::time::sleep(Duration::from_secs(95)).await;
    assert_eq!(store.resyncs.load(Ordering::SeqCst), 3);
    assert_eq!(lw.calls("list").len(), 1);

    store.fail_resync.store(true, Ordering::SeqCst);
    eventually(
        "a relist after the failed resync",
        Duration::from_secs(60),
        || lw.calls("list").len() == 2,
    )
    .await;
    assert!(
        seen.errors
            .lock()
            .iter()
            .any(|e| e.text.contains("store resync failed"))
    );
    running.stop().await;
}

/// client-go's `ShouldResync`: at each tick of the resync timer the reflector asks the gate, and
/// resyncs the store only on the ticks the gate allows.
#[tokio::test(start_paused = true)]
async fn the_resync_gate_decides_which_timer_ticks_resync() {
    let server = TestCluster::start().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(FlakyStore {
        inner: cache(),
        resyncs: AtomicUsize::new(0),
        fail_resync: AtomicBool::new(false),
    });
    let asked = Arc::new(AtomicUsize::new(0));
    let gate_asked = Arc::clone(&asked);
    // Every other tick is due: ticks 2, 4, 6, ... resync.
    let options = Arc::new(Seen::default())
        .options()
        .resync_period(Duration::from_millis(100))
        .should_resync(move || gate_asked.fetch_add(1, Ordering::SeqCst) % 2 == 1);
    let running = spawn(lw.clone(), store.clone(), options);
    own_converged(&server, &*store).await;
    eventually("six ticks", Duration::from_secs(10), || {
        asked.load(Ordering::SeqCst) >= 6
    })
    .await;
    running.stop().await;
    // Stopped: every tick asked once, and only the allowed ticks (every other) resynced.
    let asked = asked.load(Ordering::SeqCst);
    assert_eq!(
        store.resyncs.load(Ordering::SeqCst),
        asked / 2,
        "only the allowed ticks of {asked} resync"
    );
    assert_eq!(lw.calls("list").len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_store_refusing_an_event_is_reported_and_relists() {
    let server = TestCluster::start_with_faults().await.unwrap();
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(FlakyStore {
        inner: cache(),
        resyncs: AtomicUsize::new(0),
        fail_resync: AtomicBool::new(false),
    });
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options());
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    server.put_own("poison", "0").await.unwrap();
    server.put_own("fine", "0").await.unwrap();
    // The relist replaces the whole state, which this store accepts: it heals.
    own_converged(&server, &*store).await;
    assert!(seen.errors.lock()[0].text.contains("store add failed"));
    assert_eq!(lw.calls("list").len(), 2);
    assert_eq!(seen.backoffs.lock().len(), 1);
    running.stop().await;
}
