//! Starting the operator: certificates, the manager with its webhook server, what it runs
//! ([`register`]: two admission webhooks, one conversion, one controller), the CRD, and —
//! once the server listens — the configurations that route the API server to it. [`start`]
//! returns when all of that is in place; [`Running`] then runs until a shutdown.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use controller_runtime::controller::{self, ControllerHandle};
use controller_runtime::manager::{self, ShutdownHandle};
use controller_runtime::prelude::*;
use controller_runtime::webhook::{
    ClientConfig, Conversion, DEFAULT_WEBHOOK_PORT, Webhook, WebhookServerConfig,
};
use k8s_openapi::api::apps::v1::Deployment;
use kube::Client;
use testenv::webhook::ServingCerts;
use tokio::task::JoinHandle;

use super::admission::{FooDefaulter, FooValidator};
use super::install::{InstallError, install_crd, install_webhooks};
use super::names::{CONTROLLER_NAME, MUTATING_WEBHOOK, VALIDATING_WEBHOOK};
use super::reconcile::FooReconciler;
use super::{v1, v1alpha1};

/// How long [`start`] waits for the webhook server to listen.
pub const WEBHOOK_SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);

/// The Service in front of the webhook server, `namespace/name` (port 443).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookService {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
}

impl FromStr for WebhookService {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text.split_once('/') {
            Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() => Ok(Self {
                namespace: namespace.to_owned(),
                name: name.to_owned(),
            }),
            _ => Err(format!("expected NAMESPACE/NAME, got {text:?}")),
        }
    }
}

/// Where the webhook server listens and how the API server reaches it.
#[derive(Clone, Debug)]
pub struct Settings {
    /// The address the server listens on (default 127.0.0.1).
    pub host: IpAddr,
    /// The port (default 9443, controller-runtime's; 0 picks a free one).
    pub port: u16,
    /// The Service the API server calls the webhooks through (the certificate names it). `None`
    /// (the default): the URL `https://<host>:<bound port>`, 127.0.0.1 standing for every
    /// address.
    pub service: Option<WebhookService>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_WEBHOOK_PORT,
            service: None,
        }
    }
}

impl Settings {
    /// The names the serving certificate is valid for: the Service's DNS names, `localhost`,
    /// 127.0.0.1 and the listening address.
    pub fn certificate_names(&self) -> Vec<String> {
        let mut names = Vec::new();
        if let Some(service) = &self.service {
            let host = format!("{}.{}.svc", service.name, service.namespace);
            names.push(format!("{host}.cluster.local"));
            names.insert(0, host);
        }
        names.extend(["localhost".to_owned(), Ipv4Addr::LOCALHOST.to_string()]);
        if !self.host.is_unspecified() && !self.host.is_loopback() {
            names.push(self.host.to_string());
        }
        names
    }

    /// How the API server reaches the server bound at `bound`.
    pub fn client_config(&self, bound: SocketAddr) -> ClientConfig {
        match &self.service {
            Some(service) => ClientConfig::service(&service.namespace, &service.name),
            None => {
                let host = if bound.ip().is_unspecified() {
                    IpAddr::V4(Ipv4Addr::LOCALHOST)
                } else {
                    bound.ip()
                };
                ClientConfig::url(format!("https://{}", SocketAddr::new(host, bound.port())))
            }
        }
    }
}

/// Why the operator did not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The certificates could not be made.
    #[error(transparent)]
    Certs(#[from] testenv::Error),
    /// Installing the CRD or the webhook configurations failed.
    #[error(transparent)]
    Install(#[from] InstallError),
    /// The manager refused a webhook or the conversion, or stopped with an error.
    #[error("manager: {0}")]
    Manager(#[from] manager::Error),
    /// The manager refused the controller.
    #[error("controller: {0}")]
    Controller(#[from] controller::Error),
    /// The webhook server was not listening within [`WEBHOOK_SERVER_START_TIMEOUT`], or the
    /// manager stopped before it listened.
    #[error(
        "the webhook server was not listening within {WEBHOOK_SERVER_START_TIMEOUT:?} (or the \
         manager stopped first)"
    )]
    WebhookServerNotListening,
    /// The manager's task panicked or was cancelled.
    #[error("manager task: {0}")]
    Task(#[from] tokio::task::JoinError),
}

/// The operator, started: its webhooks installed and served, its controller running.
#[derive(Debug)]
pub struct Running {
    manager: Arc<Manager>,
    task: JoinHandle<Result<(), manager::Error>>,
    webhook_addr: SocketAddr,
    certs: ServingCerts,
}

impl Running {
    /// Where the webhook server listens.
    pub fn webhook_addr(&self) -> SocketAddr {
        self.webhook_addr
    }

    /// The CA that signed the serving certificate, PEM.
    pub fn ca_pem(&self) -> &[u8] {
        self.certs.ca_pem()
    }

    /// The manager.
    pub fn manager(&self) -> &Manager {
        &self.manager
    }

    /// A handle that stops the operator (as SIGINT or SIGTERM do).
    pub fn shutdown_handle(&self) -> ShutdownHandle {
        self.manager.shutdown_handle()
    }

    /// Runs until the manager stops (SIGINT, SIGTERM or [`shutdown_handle`](Self::shutdown_handle)).
    pub async fn wait(self) -> Result<(), OperatorError> {
        // The certificate directory (`self.certs`) is removed only after the server stopped.
        Ok(self.task.await??)
    }

    /// Stops the operator and waits for it.
    pub async fn stop(self) -> Result<(), OperatorError> {
        self.manager.shutdown_handle().shutdown();
        self.wait().await
    }
}

/// Registers with `manager` (built with a webhook server) the validating and defaulting
/// webhooks of `v1` Foos, the conversion of `v1alpha1` through the `v1` hub, and the
/// controller of `v1` Foos and their Deployments.
pub fn register(manager: &Manager) -> Result<ControllerHandle, OperatorError> {
    manager.add_webhook(Webhook::validator::<v1::Foo>(FooValidator).named(VALIDATING_WEBHOOK))?;
    manager.add_webhook(Webhook::defaulter::<v1::Foo>(FooDefaulter).named(MUTATING_WEBHOOK))?;
    manager.add_conversion(Conversion::hub::<v1::Foo>().spoke::<v1alpha1::Foo>())?;
    let controller = Controller::new(manager)
        .for_(Watch::of::<v1::Foo>())
        .owns(Watch::of::<Deployment>())
        .named(CONTROLLER_NAME)
        .build(FooReconciler)?;
    Ok(controller)
}

/// Starts the operator on `client`: makes a CA and the serving certificate, builds the manager
/// with the webhook server, registers the webhooks, the conversion and the controller
/// ([`register`]), installs the CRD, starts the manager, and once the webhook server listens
/// installs the webhook configurations and the CRD's conversion pointing at it.
pub async fn start(client: Client, settings: Settings) -> Result<Running, OperatorError> {
    let certs = ServingCerts::generate(CONTROLLER_NAME, &settings.certificate_names())?;
    let webhooks = WebhookServerConfig::new()
        .host(settings.host)
        .port(settings.port)
        .cert_dir(certs.dir());
    let manager = Arc::new(
        Manager::builder(client.clone())
            .webhook_server(webhooks)
            .build(),
    );
    register(&manager)?;
    install_crd(&client).await?;

    let task = tokio::spawn({
        let manager = Arc::clone(&manager);
        async move { manager.start().await }
    });
    let running = Running {
        webhook_addr: SocketAddr::from((Ipv4Addr::UNSPECIFIED, 0)),
        manager,
        task,
        certs,
    };
    let Some(webhook_addr) = webhook_server_address(&running.manager, &running.task).await else {
        return Err(match running.stop().await {
            Ok(()) => OperatorError::WebhookServerNotListening,
            Err(error) => error,
        });
    };
    let running = Running {
        webhook_addr,
        ..running
    };
    tracing::info!(%webhook_addr, "webhook server listening; installing its configurations");
    let Some(server) = running.manager.webhook_server() else {
        // Not reached: the manager was built with a webhook server.
        return Err(
            manager::Error::Webhook(controller_runtime::webhook::Error::NotConfigured).into(),
        );
    };
    let client_config = settings.client_config(webhook_addr);
    if let Err(error) = install_webhooks(&client, server, &client_config, running.ca_pem()).await {
        let _stopped = running.stop().await;
        return Err(error.into());
    }
    Ok(running)
}

/// The webhook server's address once it listens; `None` if the manager stopped first or the
/// server did not listen in time.
async fn webhook_server_address(
    manager: &Manager,
    task: &JoinHandle<Result<(), manager::Error>>,
) -> Option<SocketAddr> {
    let deadline = tokio::time::Instant::now() + WEBHOOK_SERVER_START_TIMEOUT;
    loop {
        if let Some(address) = manager.addresses().webhook {
            return Some(address);
        }
        if task.is_finished() || tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
