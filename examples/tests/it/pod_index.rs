//! `pod-index`: the per-node counts follow Pods being created, moved and deleted. The example's
//! file is compiled into this test, which calls its `watch_node_counts`.

#[path = "../../examples/pod-index.rs"]
#[allow(dead_code)]
mod example;

use example::{NodeCounts, format_counts, pod_on, watch_node_counts};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use testenv::TestEnv;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn counts(pairs: &[(&str, usize)]) -> NodeCounts {
    pairs
        .iter()
        .map(|(node, n)| ((*node).to_owned(), *n))
        .collect()
}

#[tokio::test]
async fn counts_follow_pods() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), env.namespace());
    for (name, node) in [("a1", "node-a"), ("a2", "node-a"), ("b1", "node-b")] {
        pods.create(&PostParams::default(), &pod_on(name, node))
            .await
            .unwrap();
    }

    let (tx, mut reports) = mpsc::unbounded_channel();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(watch_node_counts(
        env.client(),
        shutdown.clone(),
        move |counts| {
            let _ = tx.send(counts.clone());
        },
    ));
    let mut next = async || {
        tokio::time::timeout(env.timeout(), reports.recv())
            .await
            .unwrap()
            .unwrap()
    };
    assert_eq!(next().await, counts(&[("node-a", 2), ("node-b", 1)]));

    pods.create(&PostParams::default(), &pod_on("c1", "node-c"))
        .await
        .unwrap();
    assert_eq!(
        next().await,
        counts(&[("node-a", 2), ("node-b", 1), ("node-c", 1)])
    );
    pods.delete("b1", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
    let last = next().await;
    assert_eq!(last, counts(&[("node-a", 2), ("node-c", 1)]));
    assert_eq!(format_counts(&last), "node-a=2 node-c=1");

    shutdown.cancel();
    task.await.unwrap().unwrap();
}
