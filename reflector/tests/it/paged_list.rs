//! Paginated lists reach the store page by page (`Store::replace_in_pages`), fetched at most one
//! page ahead: a `DeltaFifo` holds the first page before the third is requested (the second is
//! asked for as soon as the first page's continue token arrives); a continue token that expires makes
//! the reflector start the replace over with the full list, so objects deleted meanwhile do not
//! linger; a list that fails part-way deletes nothing, and the retry completes it; a first
//! list that came back paginated makes later relists paginate too.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use apiserver_sim::FailRule;
use common::*;
use deltafifo::{Delta, DeltaFifo, DeltaFifoOptions};
use futures::StreamExt;
use futures::future::BoxFuture;
use indexer::{Indexer, Indexers, ObjectKey};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use reflector::{
    Error, ListParams, ListPart, ListStream, ListerWatcher, ObjectList, ReflectorOptions,
    WatchParams, WatchStream,
};
use testkit::config_maps::own_cm;
use tokio::task::JoinHandle;

/// A fifo, the consumer's cache it pops into, and every key the consumer deleted.
struct Consumer {
    fifo: DeltaFifo<ConfigMap>,
    cache: Indexer<ConfigMap>,
    deleted: Arc<Mutex<Vec<ObjectKey>>>,
    task: JoinHandle<()>,
}

impl Consumer {
    fn start() -> Self {
        let cache: Indexer<ConfigMap> = Indexer::new(Indexers::new().with_namespace());
        let fifo = DeltaFifo::new(
            DeltaFifoOptions::new()
                .known_objects(Arc::new(cache.clone()))
                .emit_replaced(true),
        );
        let deleted = Arc::new(Mutex::new(Vec::new()));
        let task = tokio::spawn({
            let (fifo, cache, deleted) = (fifo.clone(), cache.clone(), deleted.clone());
            async move {
                let apply = |deltas: deltafifo::Deltas<ConfigMap>| {
                    let (key, deltas) = deltas.into_parts();
                    for delta in deltas {
                        match delta.object() {
                            _ if matches!(delta, Delta::Deleted(_)) => {
                                cache.delete_key(&key);
                                deleted.lock().push(key.clone());
                            }
                            Some(obj) => {
                                cache.put(&key, Arc::clone(obj)).unwrap();
                            }
                            None => {}
                        }
                    }
                };
                while fifo.pop(|deltas, _| apply(deltas)).await.is_ok() {}
            }
        });
        Self {
            fifo,
            cache,
            deleted,
            task,
        }
    }

    async fn stop(self) {
        self.fifo.close();
        self.task.await.unwrap();
    }
}

/// What runs before the n-th list request (0-based).
type Hook = Box<dyn Fn(usize) -> BoxFuture<'static, ()> + Send + Sync>;

/// Runs `before_page(n)` before the n-th list request (0-based), then lists through `inner`.
struct BeforePage {
    inner: Arc<dyn ListerWatcher<ConfigMap>>,
    requests: AtomicUsize,
    before_page: Hook,
}

#[async_trait::async_trait]
impl ListerWatcher<ConfigMap> for BeforePage {
    async fn list(&self, params: &ListParams) -> Result<ObjectList<ConfigMap>, Error> {
        (self.before_page)(self.requests.fetch_add(1, Ordering::SeqCst)).await;
        self.inner.list(params).await
    }

    async fn list_stream(&self, params: &ListParams) -> Result<ListStream<ConfigMap>, Error> {
        (self.before_page)(self.requests.fetch_add(1, Ordering::SeqCst)).await;
        self.inner.list_stream(params).await
    }

    async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<ConfigMap>, Error> {
        self.inner.watch(params, resource_version).await
    }
}

/// A cluster that injects faults, with one of the test's own ConfigMaps for each of `names`.
async fn server_with(names: &[&str]) -> Arc<TestCluster> {
    let server = Arc::new(TestCluster::start_with_faults().await.unwrap());
    for name in names {
        server.put_own(name, "0").await.unwrap();
    }
    server
}

/// The key of the test's own ConfigMap `name`.
fn key(name: &str) -> ObjectKey {
    format!("{}/{name}", ns()).parse().unwrap()
}

#[tokio::test(start_paused = true)]
async fn pages_are_fetched_at_most_one_page_ahead_of_the_store() {
    let server = server_with(&["a", "b", "c", "d", "e", "f"]).await;
    let consumer = Consumer::start();
    let queued_at_third_page = Arc::new(Mutex::new(None));
    let lw = Arc::new(BeforePage {
        inner: own_config_maps(server.client().unwrap()),
        requests: AtomicUsize::new(0),
        before_page: {
            let (fifo, cache, seen) = (
                consumer.fifo.clone(),
                consumer.cache.clone(),
                queued_at_third_page.clone(),
            );
            Box::new(move |request| {
                if request == 2 {
                    *seen.lock() = Some(fifo.len() + cache.len());
                }
                Box::pin(async {})
            })
        },
    });
    let running = spawn(
        lw,
        Arc::new(consumer.fifo.clone()),
        ReflectorOptions::default()
            .streaming_list(false)
            .page_size(2),
    );
    own_converged(&server, &consumer.cache).await;
    assert!(
        queued_at_third_page
            .lock()
            .is_some_and(|queued| queued >= 2),
        "page one, queued or processed, before page three is requested: {:?}",
        queued_at_third_page.lock()
    );
    running.stop().await;
    consumer.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_expired_continue_token_restarts_the_replace_so_deleted_objects_do_not_linger() {
    let server = server_with(&["a", "b", "c", "d", "e"]).await;
    let consumer = Consumer::start();
    // Page one (a, b) is in; then b is deleted and the history compacted: the continue token
    // expires, and the full list no longer has b.
    let lw = Arc::new(BeforePage {
        inner: own_config_maps(server.client().unwrap()),
        requests: AtomicUsize::new(0),
        before_page: {
            let server = server.clone();
            Box::new(move |request| {
                let server = server.clone();
                Box::pin(async move {
                    if request == 1 {
                        server.remove("b").await.unwrap();
                        server.compact().await.unwrap();
                    }
                })
            })
        },
    });
    let running = spawn(
        lw,
        Arc::new(consumer.fifo.clone()),
        ReflectorOptions::default()
            .streaming_list(false)
            .page_size(2),
    );
    own_converged(&server, &consumer.cache).await;
    eventually("the fifo to sync", Duration::from_secs(10), || {
        consumer.fifo.has_synced()
    })
    .await;
    assert!(consumer.cache.get_by_key(&key("b")).is_none());
    assert_eq!(
        *consumer.deleted.lock(),
        [key("b")],
        "b, listed on the abandoned first page, is tombstoned by the full list"
    );
    running.stop().await;
    consumer.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_list_that_fails_part_way_deletes_nothing_and_the_retry_completes_it() {
    let server = server_with(&["a", "b", "c", "d", "e"]).await;
    let consumer = Consumer::start();
    // The second page fails once with a 500: the attempt ends, and a later list succeeds.
    let lw = Arc::new(BeforePage {
        inner: own_config_maps(server.client().unwrap()),
        requests: AtomicUsize::new(0),
        before_page: {
            let server = server.clone();
            Box::new(move |request| {
                if request == 1 {
                    server
                        .inject(FailRule::new("list", "configmaps", 500, 1))
                        .unwrap();
                }
                Box::pin(async {})
            })
        },
    });
    let seen = Arc::new(Seen::default());
    let running = spawn(
        lw.clone(),
        Arc::new(consumer.fifo.clone()),
        seen.options().page_size(2),
    );
    own_converged(&server, &consumer.cache).await;
    eventually("the fifo to sync", Duration::from_secs(10), || {
        consumer.fifo.has_synced()
    })
    .await;
    assert_eq!(seen.codes(), [Some(500)]);
    assert!(
        lw.requests.load(Ordering::SeqCst) >= 5,
        "2 pages, then 3 more"
    );
    assert!(
        consumer.deleted.lock().is_empty(),
        "nothing was deleted on the server, so nothing is deleted in the cache: {:?}",
        consumer.deleted.lock()
    );
    running.stop().await;
    consumer.stop().await;
}

/// client-go's sticky rule: a first list (RV "0") that came back in pages means the server
/// has no watch cache for the resource, so later relists page too (500 at a time) instead of
/// asking for everything at once.
#[tokio::test(start_paused = true)]
async fn a_paginated_first_list_makes_later_relists_paginate_too() {
    let server = TestCluster::start_with_faults().await.unwrap();
    futures::stream::iter(0..501)
        .for_each_concurrent(16, |i| {
            let server = &server;
            async move {
                server
                    .create(&own_cm(&format!("cm-{i}"), "0"))
                    .await
                    .unwrap();
            }
        })
        .await;
    let lw = own_config_maps(server.client().unwrap());
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options());
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    assert_eq!(store.len(), 501);

    // An in-band 500 ends the watch: the reflector relists from its last resource version.
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    let rv = running.reflector.last_sync_resource_version();
    server
        .inject(FailRule::new("watch", "configmaps", 500, 1).in_band())
        .unwrap();
    server.drop_watches();
    eventually("the relist", Duration::from_secs(30), || {
        lw.calls("list").len() == 4
    })
    .await;
    own_converged(&server, &*store).await;

    let lists = lw.calls("list");
    let requests: Vec<_> = lists
        .iter()
        .map(|c| (c.resource_version.clone(), c.limit, c.continue_token))
        .collect();
    assert_eq!(
        requests,
        [
            (Some("0".to_string()), Some(500), false),
            (None, Some(500), true),
            (Some(rv), Some(500), false),
            (None, Some(500), true),
        ]
    );
    running.stop().await;
}

/// Two pages; the first page's items arrive only once the second page has been requested, as
/// when a page is still streaming in while the pager asks for the next one.
struct ItemsAfterNextRequest {
    requests: AtomicUsize,
    second_requested: tokio::sync::watch::Sender<bool>,
}

fn named(name: &str) -> ConfigMap {
    let mut config_map = ConfigMap::default();
    config_map.metadata.namespace = Some("default".into());
    config_map.metadata.name = Some(name.into());
    config_map.metadata.resource_version = Some("5".into());
    config_map
}

#[async_trait::async_trait]
impl ListerWatcher<ConfigMap> for ItemsAfterNextRequest {
    async fn list(&self, _: &ListParams) -> Result<ObjectList<ConfigMap>, Error> {
        unreachable!("the reflector lists through list_stream")
    }

    async fn list_stream(&self, params: &ListParams) -> Result<ListStream<ConfigMap>, Error> {
        let meta = |continue_: Option<&str>| {
            Ok(ListPart::Meta(kube::api::ListMeta {
                resource_version: Some("5".into()),
                continue_: continue_.map(Into::into),
                ..Default::default()
            }))
        };
        if self.requests.fetch_add(1, Ordering::SeqCst) == 0 {
            assert!(params.continue_token.is_none());
            let mut second = self.second_requested.subscribe();
            let items = futures::stream::once(async move {
                let _ = second.wait_for(|requested| *requested).await;
                Ok(ListPart::Items(vec![named("a")]))
            });
            let head = futures::stream::iter([meta(Some("page-2"))]);
            return Ok(Box::pin(futures::StreamExt::chain(head, items)));
        }
        assert_eq!(params.continue_token.as_deref(), Some("page-2"));
        self.second_requested.send_replace(true);
        Ok(Box::pin(futures::stream::iter([
            meta(None),
            Ok(ListPart::Items(vec![named("b")])),
        ])))
    }

    async fn watch(&self, _: &WatchParams, _: &str) -> Result<WatchStream<ConfigMap>, Error> {
        Ok(Box::pin(futures::stream::pending()))
    }
}

#[tokio::test(start_paused = true)]
async fn the_next_page_is_requested_while_the_current_one_streams_in() {
    let lw = Arc::new(ItemsAfterNextRequest {
        requests: AtomicUsize::new(0),
        second_requested: tokio::sync::watch::Sender::new(false),
    });
    let store = Arc::new(cache());
    let running = spawn(
        lw.clone(),
        store.clone(),
        ReflectorOptions::default()
            .streaming_list(false)
            .page_size(1),
    );
    eventually("both pages in the store", Duration::from_secs(60), || {
        store.list_keys().len() == 2
    })
    .await;
    assert_eq!(
        lw.requests.load(Ordering::SeqCst),
        2,
        "one request per page"
    );
    assert_eq!(running.reflector.last_sync_resource_version(), "5");
    running.stop().await;
}

/// With compact copies, the store holds the same objects: listed page by page, then watched.
#[tokio::test(start_paused = true)]
async fn compact_copies_hold_the_same_objects() {
    let server = server_with(&["a", "b", "c"]).await;
    let consumer = Consumer::start();
    let running = spawn(
        own_config_maps(server.client().unwrap()),
        Arc::new(consumer.fifo.clone()),
        ReflectorOptions::default()
            .streaming_list(false)
            .page_size(2)
            .compact_objects(true),
    );
    own_converged(&server, &consumer.cache).await;
    server.put_own("d", "1").await.unwrap();
    server.remove("a").await.unwrap();
    own_converged(&server, &consumer.cache).await;
    running.stop().await;
    consumer.stop().await;
}
