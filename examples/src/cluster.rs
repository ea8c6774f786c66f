//! Where an example runs: the cluster the environment (or `--kubeconfig`) names, or an embedded
//! `apiserver-sim` when none is configured (with the `playground` feature, on by default).

use std::path::Path;
use std::time::Duration;

use controller_runtime::util::with_user_agent;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Api, Client, Config};

#[cfg(feature = "playground")]
mod embedded;
#[cfg(not(feature = "playground"))]
mod embedded_absent;
mod error;

#[cfg(feature = "playground")]
pub use embedded::{Embedded, WORKLOAD_DELAY};
#[cfg(not(feature = "playground"))]
pub use embedded_absent::Embedded;
pub use error::{CRD_ESTABLISHED_TIMEOUT, ClusterError};

/// The cluster configuration to use: from `kubeconfig` if given; otherwise from the environment
/// (KUBECONFIG, `~/.kube/config`, in-cluster), `None` when nothing is configured. An explicitly
/// configured but broken environment (KUBECONFIG or in-cluster variables set) is an error.
pub async fn cluster_config(kubeconfig: Option<&Path>) -> Result<Option<Config>, ClusterError> {
    if let Some(path) = kubeconfig {
        let invalid = |message: String| ClusterError::Kubeconfig {
            path: path.to_owned(),
            message,
        };
        let file = Kubeconfig::read_from(path).map_err(|e| invalid(e.to_string()))?;
        let config = Config::from_custom_kubeconfig(file, &KubeConfigOptions::default())
            .await
            .map_err(|e| invalid(e.to_string()))?;
        return Ok(Some(config));
    }
    match Config::infer().await {
        Ok(config) => Ok(Some(config)),
        Err(error) if explicitly_configured() => Err(error.into()),
        Err(error) => {
            tracing::debug!(%error, "no cluster configured");
            Ok(None)
        }
    }
}

/// Whether the environment asks for a particular cluster.
fn explicitly_configured() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    set("KUBECONFIG") || set("KUBERNETES_SERVICE_HOST")
}

/// Creates `crd` (an existing one is kept) and waits until the server reports it established.
pub async fn install_crd(
    client: &Client,
    crd: &CustomResourceDefinition,
) -> Result<(), ClusterError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.metadata.name.clone().unwrap_or_default();
    match api.create(&Default::default(), crd).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 409 => {}
        Err(error) => return Err(error.into()),
    }
    wait_established(client, &name).await
}

/// Waits until the server reports the CRD `name` established, at most
/// [`CRD_ESTABLISHED_TIMEOUT`].
pub async fn wait_established(client: &Client, name: &str) -> Result<(), ClusterError> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let established = async {
        loop {
            let current = api.get(name).await?;
            let ready = current
                .status
                .and_then(|status| status.conditions)
                .is_some_and(|conditions| {
                    conditions
                        .iter()
                        .any(|c| c.type_ == "Established" && c.status == "True")
                });
            if ready {
                return Ok::<(), ClusterError>(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(CRD_ESTABLISHED_TIMEOUT, established)
        .await
        .map_err(|_| ClusterError::CrdNotEstablished(name.to_owned()))?
}

/// A client for the configured cluster, or for an embedded server when none is configured.
pub struct Connection {
    /// The client.
    pub client: Client,
    /// The embedded server, if one was started (stop it with [`Embedded::shutdown`]).
    pub embedded: Option<Embedded>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("embedded", &self.embedded)
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Connects to the cluster the environment configures (the client's `User-Agent` names
    /// `program`, see `with_user_agent`), or starts an embedded server; prints one line saying
    /// which, prefixed with `program`.
    pub async fn establish(program: &str) -> Result<Self, ClusterError> {
        match cluster_config(None).await? {
            Some(config) => {
                println!("{program}: using the cluster at {}", config.cluster_url);
                Ok(Self {
                    client: Client::try_from(with_user_agent(
                        config,
                        program,
                        env!("CARGO_PKG_VERSION"),
                    ))?,
                    embedded: None,
                })
            }
            None => {
                let embedded = Embedded::start().await?;
                println!("{program}: no cluster configured, using an embedded apiserver-sim");
                println!(
                    "{program}: kubeconfig written to {}",
                    embedded.kubeconfig().display()
                );
                Ok(Self {
                    client: embedded.client()?,
                    embedded: Some(embedded),
                })
            }
        }
    }

    /// Stops the embedded server, if any.
    pub async fn close(self) {
        if let Some(embedded) = self.embedded {
            embedded.shutdown().await;
        }
    }
}

/// A token cancelled at the first Ctrl-C (SIGINT) or SIGTERM, for examples without a manager.
pub fn shutdown_on_signal() -> tokio_util::sync::CancellationToken {
    let token = tokio_util::sync::CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutdown requested");
        cancel.cancel();
    });
    token
}

#[cfg(unix)]
async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut terminate) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = terminate.recv() => {}
            }
        }
        Err(error) => {
            tracing::warn!(%error, "cannot listen for SIGTERM; Ctrl-C only");
            let _interrupted = tokio::signal::ctrl_c().await;
        }
    }
}

#[cfg(not(unix))]
async fn wait_for_signal() {
    let _interrupted = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_client_for_an_https_cluster_can_be_built() {
        // A real cluster speaks HTTPS: without a TLS stack in kube's features this is
        // `TlsRequired`, and the binaries could only reach the embedded server.
        let config = Config::new("https://127.0.0.1:6443".parse().unwrap());
        assert!(Client::try_from(config).is_ok());
    }
}
