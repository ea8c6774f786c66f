//! `config-reloader`: a ConfigMap change reaches exactly the Deployments that reference it,
//! through the field index. The example's file is compiled into this test, which calls its
//! `run`.

#[path = "../../examples/config-reloader.rs"]
#[allow(dead_code)]
mod example;

use example::{run, stamped_versions, web_deployment};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use testenv::{DEFAULT_TIMEOUT, TestEnv, eventually};
use tokio_util::sync::CancellationToken;

async fn config_map(client: &Client, name: &str, level: &str) -> ConfigMap {
    let api: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "data": {"LOG_LEVEL": level},
    }))
    .unwrap();
    api.create(&PostParams::default(), &cm).await.unwrap()
}

/// Waits until `name`'s stamp is `wanted`.
async fn stamped(deployments: &Api<Deployment>, name: &str, wanted: &str) {
    eventually(
        format!("{name}'s stamp {wanted}"),
        DEFAULT_TIMEOUT,
        || async {
            let deployment = deployments.get(name).await.unwrap();
            stamped_versions(&deployment).as_deref() == Some(wanted)
        },
    )
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_map_change_rolls_out_the_deployments_that_reference_it() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let settings = config_map(&client, "settings", "info").await;
    let other = config_map(&client, "other", "info").await;
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    for (name, config) in [("web", "settings"), ("api", "settings"), ("batch", "other")] {
        deployments
            .create(
                &PostParams::default(),
                &web_deployment(name, config).unwrap(),
            )
            .await
            .unwrap();
    }
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(run(client.clone(), shutdown.clone()));

    let version = |cm: &ConfigMap| cm.metadata.resource_version.clone().unwrap();
    let (settings_v1, other_v1) = (version(&settings), version(&other));
    stamped(&deployments, "web", &format!("settings={settings_v1}")).await;
    stamped(&deployments, "api", &format!("settings={settings_v1}")).await;
    stamped(&deployments, "batch", &format!("other={other_v1}")).await;

    // Editing `settings` re-stamps web and api, and leaves batch alone.
    let config_maps: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let edit = serde_json::json!({"data": {"LOG_LEVEL": "debug"}});
    let settings_v2 = version(
        &config_maps
            .patch("settings", &PatchParams::default(), &Patch::Merge(&edit))
            .await
            .unwrap(),
    );
    stamped(&deployments, "web", &format!("settings={settings_v2}")).await;
    stamped(&deployments, "api", &format!("settings={settings_v2}")).await;
    let batch = deployments.get("batch").await.unwrap();
    assert_eq!(stamped_versions(&batch), Some(format!("other={other_v1}")));

    shutdown.cancel();
    task.await.unwrap().unwrap();
    env.stop().await.unwrap();
}
