//! An informer that pops one item at a time (`InformerBuilder::pop_batch(1)`, client-go
//! without `InOrderInformersBatchProcess`) keeps the cache and tells its handlers as one that
//! pops batches: the initial list as initial adds, then every watched change in order.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::ApiServer;
use common::*;
use informer::{FifoKind, SharedIndexInformer};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;

async fn one_item_per_pop_tells_every_change_in_order(kind: FifoKind) {
    let server = ApiServer::start().await.unwrap();
    for i in 0..5 {
        put(&server, &format!("cm-{i}"), "0");
    }
    let api: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), NS);
    let informer = Arc::new(
        SharedIndexInformer::for_api(api)
            .fifo(kind)
            .pop_batch(1)
            .build(),
    );
    let recorder = Recorder::new("one-per-pop");
    let registration = informer.add_event_handler(recorder.clone()).unwrap();
    let running = spawn(&informer);
    tokio::time::timeout(Duration::from_secs(30), registration.synced())
        .await
        .expect("the handler synced");
    let initial = recorder.events();
    assert_eq!(initial.len(), 5, "{initial:?}");
    assert!(
        initial
            .iter()
            .all(|event| matches!(event, Event::Add(_, _, true))),
        "{initial:?}"
    );

    put(&server, "cm-1", "1");
    remove(&server, "cm-2");
    put(&server, "cm-5", "0");
    eventually("the three changes told", Duration::from_secs(30), || {
        recorder.len() >= 8
    })
    .await;
    let changes: Vec<(&'static str, String)> = recorder.events()[5..]
        .iter()
        .map(|event| {
            let what = match event {
                Event::Add(..) => "add",
                Event::Update(..) => "update",
                Event::Delete(..) => "delete",
            };
            (what, event.name().to_owned())
        })
        .collect();
    assert_eq!(
        changes,
        [
            ("update", "cm-1".to_owned()),
            ("delete", "cm-2".to_owned()),
            ("add", "cm-5".to_owned()),
        ]
    );
    eventually(
        "the cache matches the server",
        Duration::from_secs(30),
        || cache_state(&informer) == server_state(&server),
    )
    .await;

    running.stop().await;
    server.shutdown().await;
}

on_both_fifos!(one_item_per_pop_tells_every_change_in_order);
