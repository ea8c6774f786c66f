//! `configmap-mirror`: copies appear, follow edits, are repaired, and go with their source.
//! The example's file is compiled into this test, which calls its `run`.

#[path = "../../examples/configmap-mirror.rs"]
#[allow(dead_code)]
mod example;

use example::{FINALIZER, MirrorConfig, SOURCE_LABEL, run, seed_demo};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use testenv::TestEnv;
use tokio_util::sync::CancellationToken;

fn data(cm: &ConfigMap) -> Option<String> {
    cm.data.as_ref()?.get("log-level").cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrors_repairs_and_cleans_up() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let config = MirrorConfig {
        source: env.namespace_of_its_own("shared"),
        targets: vec![
            env.namespace_of_its_own("team-a"),
            env.namespace_of_its_own("team-b"),
        ],
    };
    seed_demo(&client, &config).await.unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(run(client.clone(), config.clone(), 2, shutdown.clone()));

    let source: Api<ConfigMap> = Api::namespaced(client.clone(), &config.source);
    let team_a: Api<ConfigMap> = Api::namespaced(client.clone(), &config.targets[0]);
    let team_b: Api<ConfigMap> = Api::namespaced(client.clone(), &config.targets[1]);
    for copies in [&team_a, &team_b] {
        let copy = env
            .eventually("a copy", || async {
                copies.get_opt("app-settings").await.unwrap()
            })
            .await
            .unwrap();
        assert_eq!(data(&copy).as_deref(), Some("info"));
        assert_eq!(copy.labels()[SOURCE_LABEL], config.source);
    }
    let finalized = source.get("app-settings").await.unwrap();
    assert!(finalized.finalizers().iter().any(|f| f == FINALIZER));

    // An edit of the source reaches every copy.
    let edit = serde_json::json!({"data": {"log-level": "debug"}});
    source
        .patch(
            "app-settings",
            &PatchParams::default(),
            &Patch::Merge(&edit),
        )
        .await
        .unwrap();
    for copies in [&team_a, &team_b] {
        env.eventually("the edit copied", || async {
            let copy = copies.get("app-settings").await.unwrap();
            (data(&copy).as_deref() == Some("debug")).then_some(())
        })
        .await
        .unwrap();
    }

    // A copy deleted by hand comes back.
    team_b
        .delete("app-settings", &DeleteParams::default())
        .await
        .unwrap();
    env.eventually("the copy restored", || async {
        team_b.get_opt("app-settings").await.unwrap()
    })
    .await
    .unwrap();

    // Deleting the source deletes the copies first, then the source goes.
    source
        .delete("app-settings", &DeleteParams::default())
        .await
        .unwrap();
    env.eventually("source and copies gone", || async {
        let left = [
            source.get_opt("app-settings").await.unwrap(),
            team_a.get_opt("app-settings").await.unwrap(),
            team_b.get_opt("app-settings").await.unwrap(),
        ];
        left.iter().all(Option::is_none).then_some(())
    })
    .await
    .unwrap();

    shutdown.cancel();
    task.await.unwrap().unwrap();
}
