//! The finer list and watch rules: 410 or a too-large resource version on a list retries at once
//! from the latest state with the default page sizes, an expired continue token falls back to one
//! full list, very short watches relist, watches time out after 5–10 minutes and rewatch, and the
//! dynamic and namespace- and selector-scoped lister-watchers.

use crate::common;
use crate::events::{FlakyStore, Injector};

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use common::*;
use indexer::Indexer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{ApiResource, DynamicObject};
use reflector::{
    ApiListerWatcher, Error, ListParams, ListerWatcher, ObjectList, WatchEvent, WatchParams,
    WatchStream,
};

#[tokio::test(start_paused = true)]
async fn an_expired_list_retries_at_once_from_the_latest_state() {
    let Watching {
        server,
        lw,
        store,
        seen,
        running,
    } = watching().await;
    let rv = running.reflector.last_sync_resource_version();

    // The watch fails in band (relist after one backoff step); the relist at the last RV
    // answers 410; the next list, from "", follows at once.
    server
        .inject(FailRule::new("watch", "configmaps", 500, 1).in_band())
        .unwrap();
    server
        .inject(FailRule::new("list", "configmaps", 410, 1))
        .unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    server.drop_watches();
    eventually("two more lists", Duration::from_secs(30), || {
        lw.calls("list").len() == 3
    })
    .await;
    own_converged(&server, &*store).await;

    let lists = lw.calls("list");
    assert_eq!(lists[1].resource_version.as_deref(), Some(rv.as_str()));
    assert_eq!(lists[2].resource_version, None, "latest state");
    // client-go's page sizes without an override: 500 from "0" and from "", none from a
    // known resource version (served by the watch cache).
    let limits: Vec<_> = lists.iter().map(|c| c.limit).collect();
    assert_eq!(limits, [Some(500), None, Some(500)]);
    // One backoff step, before the first relist: none between the two lists.
    assert_eq!(seen.backoffs.lock().len(), 1);
    if server.sim().is_some() {
        assert_eq!(lists[2].at, lists[1].at, "no backoff in between");
    }
    assert_eq!(seen.codes(), [Some(500), Some(410)]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_expired_continue_token_falls_back_to_one_full_list() {
    let server = Arc::new(TestCluster::start_with_faults().await.unwrap());
    for i in 0..10 {
        server.put_own(&format!("cm-{i}"), "0").await.unwrap();
    }
    // Between the first and second page, a write and a compaction expire the token.
    struct Compacting {
        inner: Arc<dyn ListerWatcher<ConfigMap>>,
        server: Arc<TestCluster>,
        pages: AtomicUsize,
    }
    #[async_trait::async_trait]
    impl ListerWatcher<ConfigMap> for Compacting {
        async fn list(&self, params: &ListParams) -> Result<ObjectList<ConfigMap>, Error> {
            if self.pages.fetch_add(1, Ordering::SeqCst) == 1 {
                self.server.put_own("late", "0").await.unwrap();
                self.server.compact().await.unwrap();
            }
            self.inner.list(params).await
        }
        async fn watch(
            &self,
            params: &WatchParams,
            rv: &str,
        ) -> Result<WatchStream<ConfigMap>, Error> {
            self.inner.watch(params, rv).await
        }
    }
    let recorder = own_config_maps(server.client().unwrap());
    let lw = Arc::new(Compacting {
        inner: recorder.clone(),
        server: server.clone(),
        pages: AtomicUsize::new(0),
    });
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(lw, store.clone(), seen.options().page_size(3));
    own_converged(&server, &*store).await;

    let lists = recorder.calls("list");
    assert_eq!(lists.len(), 3, "{lists:?}");
    assert!(lists[1].continue_token);
    assert_eq!((lists[2].limit, lists[2].continue_token), (None, false));
    assert!(
        seen.errors.lock().is_empty(),
        "the pager recovers on its own"
    );
    assert!(seen.backoffs.lock().is_empty());
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_watch_closing_at_once_without_events_relists_after_a_backoff() {
    let Watching {
        server,
        lw,
        seen,
        running,
        ..
    } = watching().await;
    server.drop_watches();
    eventually("the relist", Duration::from_secs(30), || {
        lw.calls("list").len() == 2
    })
    .await;
    assert!(seen.errors.lock()[0].text.contains("without any event"));
    assert_eq!(seen.backoffs.lock().len(), 1);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn dynamic_objects_are_reflected_and_objects_of_another_kind_skipped() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let resource = ApiResource::erase::<ConfigMap>(&());
    let api: Api<DynamicObject> = Api::namespaced_with(server.client().unwrap(), ns(), &resource);
    let store: Arc<Indexer<DynamicObject>> = Arc::new(Indexer::default());
    let running = spawn(
        Arc::new(ApiListerWatcher::dynamic(api.clone(), &resource).labels(OWN_SELECTOR)),
        store.clone(),
        reflector::ReflectorOptions::default(),
    );
    eventually("the dynamic list", Duration::from_secs(10), || {
        store.list().len() == 1
    })
    .await;
    server.put_own("b", "0").await.unwrap();
    eventually("the dynamic watch", Duration::from_secs(10), || {
        store.list().len() == 2
    })
    .await;
    running.stop().await;
    eventually("the watch to close", Duration::from_secs(10), || {
        server.open_watches() == 0
    })
    .await;

    // Built for Secrets but pointed at config maps: every object is of the wrong kind.
    let mut secrets = ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&());
    secrets.plural = "configmaps".into();
    let wrong: Arc<Indexer<DynamicObject>> = Arc::new(Indexer::default());
    let seen = Arc::new(Seen::default());
    let running = spawn(
        Arc::new(ApiListerWatcher::dynamic(api, &secrets).labels(OWN_SELECTOR)),
        wrong.clone(),
        seen.options(),
    );
    eventually("the watch", Duration::from_secs(10), || {
        server.open_watches() == 1
    })
    .await;
    server.put_own("c", "0").await.unwrap();
    eventually("the skipped event", Duration::from_secs(10), || {
        !seen.errors.lock().is_empty()
    })
    .await;
    assert!(
        seen.errors.lock()[0]
            .text
            .contains("expected an object of v1/Secret")
    );
    assert!(wrong.list().is_empty());
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn namespace_label_and_field_selectors_scope_the_list_and_the_watch() {
    let server = TestCluster::start().await.unwrap();
    let labelled = |name: &str, app: &str| {
        let mut obj = cm(name, "0");
        obj.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        obj
    };
    for (name, app) in [("web-1", "web"), ("web-2", "web"), ("db-1", "db")] {
        server.create(&labelled(name, app)).await.unwrap();
    }
    // Outside the Api's namespace: neither reflector sees it.
    let other_namespace = format!("{}-other", ns());
    let mut other = k8s_openapi::api::core::v1::Namespace::default();
    other.metadata.name = Some(other_namespace.clone());
    server.create(&other).await.unwrap();
    let mut elsewhere = labelled("db-1", "web");
    elsewhere.metadata.namespace = Some(other_namespace.clone());
    server.create(&elsewhere).await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    let by_label = Arc::new(cache());
    let by_field = Arc::new(cache());
    let lw = ApiListerWatcher::new(api.clone()).labels("app=web");
    assert!(lw_description_has(&lw, "labelSelector=app=web"));
    let labels = spawn(Arc::new(lw), by_label.clone(), Default::default());
    let fields = spawn(
        Arc::new(ApiListerWatcher::new(api).fields("metadata.name=db-1")),
        by_field.clone(),
        Default::default(),
    );
    let names = |store: &Indexer<ConfigMap>| {
        let mut names: Vec<_> = store.list_keys().iter().map(|k| k.to_string()).collect();
        names.sort();
        names
    };
    eventually("the scoped lists", Duration::from_secs(10), || {
        names(&by_label) == [format!("{}/web-1", ns()), format!("{}/web-2", ns())]
            && names(&by_field) == [format!("{}/db-1", ns())]
    })
    .await;
    // Watch events arrive in order: had web-4 (elsewhere) leaked, it would precede web-3.
    let mut elsewhere = labelled("web-4", "web");
    elsewhere.metadata.namespace = Some(other_namespace);
    server.create(&elsewhere).await.unwrap();
    server.create(&labelled("web-3", "web")).await.unwrap();
    server.create(&labelled("db-2", "db")).await.unwrap();
    server
        .delete("", "configmaps", Some(ns()), "db-1")
        .await
        .unwrap();
    eventually("the scoped watches", Duration::from_secs(10), || {
        names(&by_label).len() == 3 && names(&by_field).is_empty()
    })
    .await;
    assert_eq!(
        names(&by_label),
        [
            format!("{}/web-1", ns()),
            format!("{}/web-2", ns()),
            format!("{}/web-3", ns())
        ]
    );
    labels.stop().await;
    fields.stop().await;
}

fn lw_description_has(lw: &ApiListerWatcher<ConfigMap>, text: &str) -> bool {
    ListerWatcher::describe(lw).contains(text)
}

#[tokio::test(start_paused = true)]
async fn a_change_before_the_initial_events_end_means_a_plain_watch_and_falls_back_to_a_list() {
    let server = TestCluster::start().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let recorder = own_config_maps(server.client().unwrap());
    let injector = Arc::new(Injector {
        inner: recorder.clone(),
        bad: parking_lot::Mutex::new(vec![Ok(WatchEvent::Modified(cm("a", "0")))]),
    });
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(injector, store.clone(), seen.options().streaming_list(true));
    own_converged(&server, &*store).await;
    assert_eq!(recorder.calls("list").len(), 1);
    assert!(seen.backoffs.lock().is_empty());
    assert!(seen.errors.lock()[0].text.contains("MODIFIED or DELETED"));
    running.stop().await;
}

/// Watches ask for bookmarks and a random server timeout of 5–10 minutes; when the server ends
/// a watch at its timeout the reflector rewatches without listing; by default nothing resyncs.
#[tokio::test(start_paused = true)]
async fn watches_time_out_after_five_to_ten_minutes_and_rewatch_without_relisting_or_resyncing() {
    if testkit::cluster::sim_only("virtual time (an hour of 5-10 minute watch timeouts)") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    put(&server, "a", "0");
    let lw = config_maps(server.client().unwrap());
    let store = Arc::new(FlakyStore {
        inner: cache(),
        resyncs: AtomicUsize::new(0),
        fail_resync: AtomicBool::new(false),
    });
    let seen = Arc::new(Seen::default());
    let running = spawn(lw.clone(), store.clone(), seen.options());
    converged(&server, &*store).await;

    // One virtual hour: the server closes each watch at its timeoutSeconds.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    put(&server, "b", "0");
    converged(&server, &*store).await;

    let watches = lw.calls("watch");
    assert!(watches.len() >= 6, "{} watches in an hour", watches.len());
    for watch in &watches {
        assert!(watch.bookmarks, "{watch:?}");
        let timeout = watch.timeout.unwrap_or_default();
        assert!((300..600).contains(&timeout), "{watch:?}");
    }
    let mut timeouts: Vec<_> = watches.iter().map(|w| w.timeout).collect();
    timeouts.dedup();
    assert!(timeouts.len() > 1, "the timeouts are random: {timeouts:?}");
    assert_eq!(server.request_count("list", "configmaps"), 1, "no relist");
    assert!(seen.backoffs.lock().is_empty());
    assert!(seen.errors.lock().is_empty(), "{:?}", seen.errors.lock());
    assert_eq!(store.resyncs.load(Ordering::SeqCst), 0, "no resync period");
    running.stop().await;
}

/// A resourceVersion no server reaches while a test runs (a real one's grows by its writes).
const FUTURE: &str = "999999999999";

/// A resource version the server has not reached yet ("Too large resource version", as from
/// a watch cache that lags behind): the relist at it fails, and the list from the latest state
/// follows at once.
#[tokio::test(start_paused = true)]
async fn a_too_large_resource_version_lists_the_latest_state_at_once() {
    let server = TestCluster::start_with_faults().await.unwrap();
    server.put_own("a", "0").await.unwrap();
    let recorder = own_config_maps(client_without_retry(&server));
    let ahead = kube::core::watch::Bookmark {
        types: Default::default(),
        metadata: kube::core::watch::BookmarkMeta {
            resource_version: FUTURE.into(),
            annotations: Default::default(),
        },
    };
    let injector = Arc::new(Injector {
        inner: recorder.clone(),
        bad: parking_lot::Mutex::new(vec![Ok(WatchEvent::Bookmark(ahead))]),
    });
    let store = Arc::new(cache());
    let seen = Arc::new(Seen::default());
    let running = spawn(injector, store.clone(), seen.options());
    eventually(
        "the bookmark from the future",
        Duration::from_secs(10),
        || running.reflector.last_sync_resource_version() == FUTURE,
    )
    .await;

    // The rewatch fails in band and costs a relist; the relist at FUTURE fails; the list
    // from "" follows at once.
    server
        .inject(FailRule::new("watch", "configmaps", 500, 1).in_band())
        .unwrap();
    server.drop_watches();
    eventually("two more lists", Duration::from_secs(30), || {
        recorder.calls("list").len() == 3
    })
    .await;
    let last = server.put_own("b", "0").await.unwrap();
    own_converged(&server, &*store).await;

    let lists = recorder.calls("list");
    let versions: Vec<_> = lists.iter().map(|c| c.resource_version.clone()).collect();
    assert_eq!(versions, [Some("0".into()), Some(FUTURE.into()), None]);
    if server.sim().is_some() {
        assert_eq!(lists[2].at, lists[1].at, "no backoff in between");
    }
    assert_eq!(seen.backoffs.lock().len(), 1, "one, after the failed watch");
    assert_eq!(seen.codes(), [Some(500), Some(504)]);
    // Back from the future: the last change's version (or a real server's later bookmark).
    let synced = running.reflector.last_sync_resource_version();
    let last = last.metadata.resource_version.unwrap();
    assert!(version(&synced) >= version(&last), "{synced} < {last}");
    assert!(version(&synced) < version(FUTURE));
    running.stop().await;
}

#[tokio::test]
async fn a_resource_the_server_does_not_serve_is_named_in_the_error() {
    let server = TestCluster::start().await.unwrap();
    // No CustomResourceDefinition serves this group: the server answers 404 for the collection.
    let resource = ApiResource {
        group: "nowhere.example.com".into(),
        version: "v1".into(),
        api_version: "nowhere.example.com/v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
    };
    let api: Api<DynamicObject> = Api::namespaced_with(server.client().unwrap(), "a", &resource);
    let lw = ApiListerWatcher::dynamic(api, &resource);
    let listed = lw.list(&ListParams::default()).await.map(|_| ());
    let watched = lw.watch(&WatchParams::default(), "0").await.map(|_| ());
    for (verb, result) in [("list", listed), ("watch", watched)] {
        let error = result.expect_err(verb);
        assert!(
            matches!(&error, Error::NotServed { resource, .. } if resource == "widgets.nowhere.example.com"),
            "{verb}: {error:?}"
        );
        assert!(
            error.to_string().contains("CustomResourceDefinition"),
            "{verb}: {error}"
        );
    }
    server.shutdown().await;
}
