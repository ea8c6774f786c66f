//! A factory's fifo and pop batch reach every informer it makes, and an informer made so keeps
//! its cache like any other: the initial list, then each change. Runs on the simulator and,
//! with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster.

use crate::common;

use std::time::Duration;

use common::*;
use informer::{FifoKind, InformerFactory, InformerScope};
use k8s_openapi::api::core::v1::ConfigMap;

/// The values of the test's own ConfigMaps in `informer`'s cache (a whole cluster's
/// controllers put ConfigMaps of their own in every namespace).
fn cached(informer: &informer::SharedIndexInformer<ConfigMap>) -> Vec<(String, String)> {
    let mut values: Vec<(String, String)> = informer
        .indexer()
        .list()
        .iter()
        .filter_map(|cm| {
            let name = cm.metadata.name.clone()?;
            let value = cm.data.as_ref()?.get("v")?.clone();
            name.starts_with("fifo-").then_some((name, value))
        })
        .collect();
    values.sort();
    values
}

#[tokio::test]
async fn a_factorys_fifo_and_pop_batch_reach_its_informers() {
    let server = TestCluster::start().await.unwrap();
    server.put("fifo-a", "1").await.unwrap();
    server.put("fifo-b", "1").await.unwrap();
    let factory = InformerFactory::builder(server.client().unwrap())
        .fifo(FifoKind::InOrder)
        .pop_batch(0)
        .build();
    let informer = factory.informer_in::<ConfigMap>(InformerScope::namespace(ns()));
    assert_eq!(informer.fifo_kind(), FifoKind::InOrder);
    assert_eq!(informer.pop_batch(), 1, "a batch of 0 counts as 1");
    factory.start();
    factory
        .wait_for_cache_sync(Duration::from_secs(30))
        .await
        .unwrap();
    let listed = vec![("fifo-a".into(), "1".into()), ("fifo-b".into(), "1".into())];
    assert_eq!(cached(&informer), listed);

    server.put("fifo-a", "2").await.unwrap();
    server.remove("fifo-b").await.unwrap();
    eventually("the changes cached", Duration::from_secs(30), || {
        cached(&informer) == vec![("fifo-a".to_owned(), "2".to_owned())]
    })
    .await;

    factory.shutdown().await;
    server.shutdown().await;
}

#[tokio::test]
async fn a_factory_defaults_to_the_delta_fifo_and_batches_of_a_thousand() {
    let server = TestCluster::start().await.unwrap();
    let factory = InformerFactory::new(server.client().unwrap());
    let informer = factory.informer_in::<ConfigMap>(InformerScope::namespace(ns()));
    assert_eq!(informer.fifo_kind(), FifoKind::Deltas);
    assert_eq!(informer.pop_batch(), 1_000);
    server.shutdown().await;
}
