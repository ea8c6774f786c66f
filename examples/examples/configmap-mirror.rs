//! Mirrors ConfigMaps labelled `mirror.kube-rt.dev/enabled=true` from namespace `shared` into
//! `team-a` and `team-b`, with an informer factory, two handlers and a finalizer. Without a
//! configured cluster it starts an embedded apiserver-sim, creates the namespaces and one
//! labelled ConfigMap. Stop with Ctrl-C.

use std::process::ExitCode;

use examples::cluster::{Connection, shutdown_on_signal};
use examples::configmap_mirror::{MirrorConfig, run, seed_demo};

#[tokio::main]
async fn main() -> ExitCode {
    examples::logging::init();
    let connection = match Connection::establish("configmap-mirror").await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::error!(%error, "cannot connect");
            return ExitCode::FAILURE;
        }
    };
    let config = MirrorConfig {
        source: "shared".to_owned(),
        targets: vec!["team-a".to_owned(), "team-b".to_owned()],
    };
    if connection.embedded.is_some()
        && let Err(error) = seed_demo(&connection.client, &config).await
    {
        tracing::error!(%error, "cannot seed the embedded server");
        connection.close().await;
        return ExitCode::FAILURE;
    }
    let result = run(connection.client.clone(), config, 2, shutdown_on_signal()).await;
    connection.close().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "configmap-mirror failed");
            ExitCode::FAILURE
        }
    }
}
