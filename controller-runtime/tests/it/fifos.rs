//! The manager's caches run on the fifo and pop batch its builder names, and a controller over
//! them reconciles as over the default: client-go 1.36's in-order informers one option away.
//! Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use controller_runtime::informer::FifoKind;
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;

#[tokio::test]
async fn the_managers_caches_run_on_the_fifo_and_batch_it_names() {
    let server = TestCluster::start().await.unwrap();
    server.put("in-order", "1").await.unwrap();
    let manager = Arc::new(
        manager(&server)
            .fifo(FifoKind::InOrder)
            .pop_batch(1)
            .build(),
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let recorded = seen.clone();
    let _controller = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let value = ctx
                    .get()
                    .and_then(|cm| cm.data.as_ref()?.get("v").cloned())
                    .filter(|_| req.name() == "in-order");
                recorded.lock().extend(value);
                async { Ok::<_, std::convert::Infallible>(Action::done()) }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    eventually("the first reconcile", Duration::from_secs(30), || {
        seen.lock().contains(&"1".to_owned())
    })
    .await;
    server.put("in-order", "2").await.unwrap();
    eventually("the change reconciled", Duration::from_secs(30), || {
        seen.lock().contains(&"2".to_owned())
    })
    .await;
    let informers = manager.cache().informers::<ConfigMap>().unwrap();
    assert!(!informers.is_empty());
    for informer in &informers {
        assert_eq!(informer.fifo_kind(), FifoKind::InOrder);
        assert_eq!(informer.pop_batch(), 1);
    }

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
