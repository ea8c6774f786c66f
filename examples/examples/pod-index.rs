//! Prints the number of Pods per node whenever it changes, from a reflector feeding an indexer
//! (no informer). Without a configured cluster it starts an embedded apiserver-sim and schedules
//! a few Pods there. Stop with Ctrl-C.

use std::process::ExitCode;

use examples::cluster::{Connection, shutdown_on_signal};
use examples::pod_index::{format_counts, simulate_scheduling, watch_node_counts};

#[tokio::main]
async fn main() -> ExitCode {
    examples::logging::init();
    let connection = match Connection::establish("pod-index").await {
        Ok(connection) => connection,
        Err(error) => {
            tracing::error!(%error, "cannot connect");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = shutdown_on_signal();
    if connection.embedded.is_some() {
        let (client, shutdown) = (connection.client.clone(), shutdown.clone());
        tokio::spawn(async move {
            if let Err(error) = simulate_scheduling(client, shutdown).await {
                tracing::warn!(%error, "simulated scheduling stopped");
            }
        });
    }
    let result = watch_node_counts(connection.client.clone(), shutdown, |counts| {
        println!("pods per node: {}", format_counts(counts));
    })
    .await;
    connection.close().await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(%error, "pod index failed");
            ExitCode::FAILURE
        }
    }
}
