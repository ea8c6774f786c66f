//! The resource version the cache reflects (`last_store_sync_resource_version`): the list's
//! once it is processed, each change's as it is applied, and a watch bookmark's once what came
//! before it is; with a paged list and with a streaming one.

use crate::common;

use std::time::Duration;

use common::*;
use informer::{ApiListerWatcher, FifoKind, ReflectorOptions, SharedIndexInformer};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::ObjectMeta;
use testkit::fault::InjectFaults;

/// Writes something the config-map watch does not carry: the server's resource version moves
/// on, and only a bookmark tells the informer.
async fn write_elsewhere(server: &TestCluster, name: &str) -> String {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns().into()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    let stored = server.create(&secret).await.unwrap();
    stored.metadata.resource_version.unwrap()
}

/// Whether the version `have` is `want`: exactly on the simulator; on a real server, which
/// also sends bookmarks of its own now and then, `want` or a later one.
fn is_at(server: &TestCluster, have: &str, want: &str) -> bool {
    match server.sim() {
        Some(_) => have == want,
        None => !have.is_empty() && version(have) >= version(want),
    }
}

async fn follows_lists_changes_and_bookmarks(kind: FifoKind) {
    for streaming_list in [false, true] {
        let server = TestCluster::start_with_faults().await.unwrap();
        server.put_own("a", "0").await.unwrap();
        server.put_own("b", "0").await.unwrap();
        let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
        let own = ApiListerWatcher::new(api).labels(OWN_SELECTOR);
        let informer = std::sync::Arc::new(
            SharedIndexInformer::builder(std::sync::Arc::new(own))
                .reflector_options(ReflectorOptions::default().streaming_list(streaming_list))
                .fifo(kind)
                .build(),
        );
        let running = spawn(&informer);
        informer.synced().await;
        // The list's version, once the list is in the cache.
        let listed = informer.last_sync_resource_version();
        assert!(!listed.is_empty());
        eventually("the list's version", Duration::from_secs(30), || {
            is_at(
                &server,
                &informer.last_store_sync_resource_version(),
                &listed,
            )
        })
        .await;

        // A change: its version once the cache holds it.
        let changed = rv(&server.put_own("a", "1").await.unwrap());
        eventually("the change's version", Duration::from_secs(30), || {
            is_at(
                &server,
                &informer.last_store_sync_resource_version(),
                &changed,
            )
        })
        .await;
        assert_eq!(cache_state(&informer)["a"], changed);

        // Writes the watch does not carry, then a bookmark: the cache reflects the server's
        // newer version though it holds nothing new.
        write_elsewhere(&server, "s1").await;
        let elsewhere = write_elsewhere(&server, "s2").await;
        assert!(version(&elsewhere) > version(&changed));
        let bookmarked = server.send_bookmarks().await.unwrap().to_string();
        assert!(is_at(&server, &bookmarked, &elsewhere), "{bookmarked}");
        eventually("the bookmark's version", Duration::from_secs(30), || {
            is_at(
                &server,
                &informer.last_store_sync_resource_version(),
                &bookmarked,
            )
        })
        .await;
        assert_eq!(cache_state(&informer), server.own_state().await.unwrap());

        running.stop().await;
        // A stopped informer still says what its cache reflects.
        let reflected = informer.last_store_sync_resource_version();
        assert!(is_at(&server, &reflected, &bookmarked), "{reflected}");
        server.shutdown().await;
    }
}

on_both_fifos!(follows_lists_changes_and_bookmarks, start_paused = true);
