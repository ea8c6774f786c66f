//! Rolls a Deployment out again whenever a ConfigMap its pods reference changes: a field index
//! maps each ConfigMap to the Deployments that use it. Without a configured cluster it starts
//! an embedded apiserver-sim with ConfigMap `app-settings` and Deployment `web`; edit the
//! ConfigMap (`kubectl edit configmap app-settings`) and watch the Deployment's pod template
//! annotation `config.kube-rt.dev/versions` follow. Stop with Ctrl-C.

use std::process::ExitCode;

use examples::cluster::{Connection, shutdown_on_signal};
use examples::config_reloader::{run, seed_demo};

#[tokio::main]
async fn main() -> ExitCode {
    examples::logging::init();
    let connection = match Connection::establish("config-reloader").await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::error!(%error, "cannot connect");
            return ExitCode::FAILURE;
        }
    };
    if connection.embedded.is_some()
        && let Err(error) = seed_demo(&connection.client).await
    {
        tracing::error!(%error, "cannot seed the embedded server");
        connection.close().await;
        return ExitCode::FAILURE;
    }
    let result = run(connection.client.clone(), shutdown_on_signal()).await;
    connection.close().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "config-reloader failed");
            ExitCode::FAILURE
        }
    }
}
