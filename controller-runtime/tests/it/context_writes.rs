//! The context's tracked write methods: patch, patch_status and replace_status on the primary
//! object (a custom resource with a status subresource, which no controller of a whole cluster
//! writes). Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::controller::{
    Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn,
};
use kube::api::{ObjectMeta, Patch, PatchParams};
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// The primary kind of the test: a spec, and a status written through its subresource.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "writes.kube-rt.dev",
    version = "v1",
    kind = "Tally",
    namespaced,
    status = "TallyStatus"
)]
pub struct TallySpec {
    size: i64,
}

/// What the reconciler reports.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct TallyStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    observed: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ready: Option<i64>,
}

#[tokio::test(start_paused = true)]
async fn writes_through_the_context_reach_the_server() {
    let server = TestCluster::start().await.unwrap();
    server.install_test_crd(&Tally::crd()).await.unwrap();
    let manager = Arc::new(manager(&server).build());
    Controller::new(&manager)
        .for_(Watch::of::<Tally>())
        .build(reconciler_fn(
            |_req: Request, ctx: Context<Tally>| async move {
                let Some(cached) = ctx.get() else {
                    return Ok(Action::done());
                };
                if cached
                    .metadata
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a.contains_key("seen"))
                {
                    return Ok(Action::done());
                }
                ctx.patch(
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"annotations": {"seen": "yes"}}})),
                )
                .await?;
                let patched = ctx
                    .patch_status(
                        &PatchParams::default(),
                        &Patch::Merge(json!({"status": {"observed": 1}})),
                    )
                    .await?;
                let mut next = patched.clone();
                next.status.get_or_insert_with(TallyStatus::default).ready = Some(0);
                ctx.replace_status(&next).await?;
                Ok::<_, ReconcileError>(Action::done())
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    let tally = Tally {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some(ns().into()),
            ..ObjectMeta::default()
        },
        spec: TallySpec { size: 3 },
        status: None,
    };
    server.create(&tally).await.unwrap();
    testkit::eventually_async("the writes", Duration::from_secs(30), || async {
        server
            .list::<Tally>()
            .await
            .unwrap()
            .first()
            .is_some_and(|t| {
                let status = t.status.clone().unwrap_or_default();
                t.metadata
                    .annotations
                    .as_ref()
                    .is_some_and(|a| a["seen"] == "yes")
                    && status.observed == Some(1)
                    && status.ready == Some(0)
            })
    })
    .await;

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
