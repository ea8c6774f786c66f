//! Managers started by the environment: synced, stopped, failing with their error; waits that
//! time out say what they waited for.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use controller_runtime::prelude::*;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResource;
use kube::api::{Api, PostParams};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use testenv::{Error, TestEnv};

/// A kind whose CRD the tests never install.
#[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[kube(group = "example.dev", version = "v1", kind = "Missing", namespaced)]
pub struct MissingSpec {
    size: i32,
}

fn config_map(name: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    cm
}

#[tokio::test]
async fn a_started_manager_reconciles_and_stops_cleanly() {
    let env = TestEnv::start().await.unwrap();
    let seen = Arc::new(AtomicUsize::new(0));
    let manager = env.manager();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn({
            let seen = Arc::clone(&seen);
            move |_: Request, _: Context<ConfigMap>| {
                seen.fetch_add(1, Ordering::SeqCst);
                async { Ok::<_, ReconcileError>(Action::done()) }
            }
        }))
        .unwrap();
    let mut running = env.start_manager(manager);
    running.wait_synced().await.unwrap();
    assert!(running.manager().has_synced());

    let api: Api<ConfigMap> = Api::default_namespaced(env.client());
    api.create(&PostParams::default(), &config_map("a"))
        .await
        .unwrap();
    env.eventually("a reconcile", || async { seen.load(Ordering::SeqCst) > 0 })
        .await
        .unwrap();
    running.stop().await.unwrap();
}

#[tokio::test]
async fn a_manager_whose_cache_never_syncs_reports_its_error() {
    let env = TestEnv::start().await.unwrap();
    let manager = env
        .manager_builder()
        .cache_sync_timeout(Duration::from_millis(300))
        .build();
    Controller::new(&manager)
        .for_(Watch::of::<Missing>())
        .build(reconciler_fn(|_: Request, _: Context<Missing>| async {
            Ok::<_, ReconcileError>(Action::done())
        }))
        .unwrap();
    let mut running = env.start_manager(manager);
    let error = running.wait_synced().await.unwrap_err();
    assert!(matches!(error, Error::Manager(_)), "{error}");
    assert!(
        error.to_string().contains("example.dev/v1 Missing"),
        "{error}"
    );
}

#[tokio::test]
async fn dropping_the_environment_stops_its_managers() {
    let env = TestEnv::start().await.unwrap();
    let mut running = env.start_manager(env.manager());
    running.wait_synced().await.unwrap();
    drop(env);
    testenv::eventually("the manager to stop", Duration::from_secs(20), || {
        let finished = running.is_finished();
        async move { finished }
    })
    .await
    .unwrap();
    running.stop().await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_times_out_names_the_condition_and_its_last_error() {
    let mut attempts = 0;
    let error = testenv::eventually("the answer", Duration::from_secs(5), || {
        attempts += 1;
        let attempt = attempts;
        async move { Err::<bool, _>(format!("attempt {attempt}: not yet")) }
    })
    .await
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.starts_with("timed out after 5s waiting for the answer"),
        "{message}"
    );
    assert!(
        message.ends_with(&format!("(last: attempt {attempts}: not yet)")),
        "{message}"
    );
    assert!(attempts > 1);
}
