//! The resource version the cache reflects (`last_store_sync_resource_version`): the list's
//! once it is processed, each change's as it is applied, and a watch bookmark's once what came
//! before it is; with a paged list and with a streaming one.

use crate::common;

use std::time::Duration;

use apiserver_sim::ApiServer;
use common::*;
use informer::{FifoKind, ReflectorOptions, SharedIndexInformer};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::ObjectMeta;

/// Writes something the config-map watch does not carry: the server's resource version moves
/// on, and only a bookmark tells the informer.
fn write_elsewhere(server: &ApiServer, name: &str) -> String {
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    let stored = server.create(&secret).unwrap();
    stored.metadata.resource_version.unwrap()
}

async fn follows_lists_changes_and_bookmarks(kind: FifoKind) {
    if testkit::cluster::sim_only("bookmarks on demand") {
        return;
    }
    for streaming_list in [false, true] {
        let server = ApiServer::start().await.unwrap();
        put(&server, "a", "0");
        put(&server, "b", "0");
        let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), NS);
        let informer = std::sync::Arc::new(
            SharedIndexInformer::for_api(api)
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
            informer.last_store_sync_resource_version() == listed
        })
        .await;

        // A change: its version once the cache holds it.
        let changed = rv(&put(&server, "a", "1"));
        eventually("the change's version", Duration::from_secs(30), || {
            informer.last_store_sync_resource_version() == changed
        })
        .await;
        assert_eq!(cache_state(&informer)["a"], changed);

        // Writes the watch does not carry, then a bookmark: the cache reflects the server's
        // newer version though it holds nothing new.
        write_elsewhere(&server, "s1");
        let elsewhere = write_elsewhere(&server, "s2");
        assert!(elsewhere.parse::<u64>().unwrap() > changed.parse::<u64>().unwrap());
        server.send_bookmarks();
        eventually("the bookmark's version", Duration::from_secs(30), || {
            informer.last_store_sync_resource_version() == elsewhere
        })
        .await;
        assert_eq!(cache_state(&informer), server_state(&server));

        running.stop().await;
        // A stopped informer still says what its cache reflects.
        assert_eq!(informer.last_store_sync_resource_version(), elsewhere);
        server.shutdown().await;
    }
}

on_both_fifos!(follows_lists_changes_and_bookmarks, start_paused = true);
