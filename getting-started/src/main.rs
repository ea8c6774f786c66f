//! Runs the Memcached operator against the cluster the environment configures (KUBECONFIG,
//! `~/.kube/config` or in-cluster) until SIGINT/SIGTERM; `memcached-operator crd` prints the CRD
//! to apply first.

use controller_runtime::prelude::*;
use kube::CustomResourceExt;
use memcached_operator::{Memcached, register};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().nth(1).as_deref() == Some("crd") {
        println!("{}", serde_json::to_string_pretty(&Memcached::crd())?);
        return Ok(());
    }
    tracing_subscriber::fmt::init();
    let manager = Manager::try_default().await?;
    register(&manager)?;
    manager.start().await?;
    Ok(())
}
