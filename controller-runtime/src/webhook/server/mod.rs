//! [`WebhookServer`]: the HTTPS server of the admission and conversion webhooks — what is
//! registered on which path, its start, and whether it serves.
//!
//! - `serve.rs`: the accept loop (TLS handshakes, HTTP/1.1 connections);
//!   `http.rs`: answering one request; `shared.rs`: what the server and its connections share.
//! - `tls.rs`: the serving certificate and its reload.
//! - `metrics.rs`: the `controller_runtime_webhook_*` series.

mod http;
mod metrics;
mod serve;
mod shared;
mod tls;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use crate::kind::Kind;
use crate::ops::metrics::Metrics;
use crate::webhook::config::WebhookServerConfig;
use crate::webhook::configuration::{
    ClientConfig, mutating_webhook_configuration, validating_webhook_configuration,
};
use crate::webhook::conversion::{KindConversion, Registry};
use crate::webhook::error::Error;
use crate::webhook::paths::{CONVERT_PATH, check_path};
use crate::webhook::registration::Webhook;
use metrics::WebhookMetrics;
use shared::{Route, Shared};

/// The admission and conversion webhook server (controller-runtime's `webhook.Server`).
///
/// Register [`Webhook`]s and [conversions](crate::webhook::Conversion) on it — before or after
/// it started — then [`start`](Self::start) it, or let the [`Manager`](crate::manager::Manager) start it
/// (with [`ManagerBuilder::webhook_server`](crate::manager::ManagerBuilder::webhook_server)): before the
/// caches sync, since listing a converted kind may need the conversion webhook, and on every
/// replica, leader or not. Cheap to clone; clones share one server.
#[derive(Clone)]
pub struct WebhookServer {
    shared: Arc<Shared>,
    registered: Arc<Mutex<Registered>>,
}

/// The registered webhooks (for the configuration helpers) and the server's start.
#[derive(Default)]
struct Registered {
    webhooks: Vec<Webhook>,
    started: bool,
    address: Option<SocketAddr>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("config", &self.shared.config)
            .field("address", &self.local_addr())
            .finish_non_exhaustive()
    }
}

impl WebhookServer {
    /// A server with `config`, nothing registered. Its metrics are recorded but exported
    /// nowhere; a manager's server exports them on the manager's `/metrics`.
    pub fn new(config: WebhookServerConfig) -> Self {
        Self::with_metrics(config, None)
    }

    /// A server whose metrics are registered in `metrics`.
    pub(crate) fn with_metrics(config: WebhookServerConfig, metrics: Option<&Metrics>) -> Self {
        Self {
            shared: Arc::new(Shared {
                config,
                routes: RwLock::new(HashMap::new()),
                conversions: RwLock::new(Registry::default()),
                metrics: WebhookMetrics::new(metrics),
                serving: AtomicBool::new(false),
            }),
            registered: Arc::new(Mutex::new(Registered::default())),
        }
    }

    /// The answer (status and body) to a request body on `path`, as the server would send it
    /// once the body is read; `None` when nothing is served there. For the fuzzing checks.
    #[cfg(feature = "fuzzing")]
    pub(crate) async fn answer(&self, path: &str, body: &[u8]) -> Option<(u16, Vec<u8>)> {
        let route = self.shared.routes.read().get(path).cloned()?;
        let (status, answer) = match route {
            Route::Admission(hook) => http::answer_admission(&self.shared, hook, body).await,
            Route::Conversion => http::answer_conversion(&self.shared, body).await,
        };
        Some((status.as_u16(), answer))
    }

    /// The server's settings.
    pub fn config(&self) -> &WebhookServerConfig {
        &self.shared.config
    }

    /// Serves `webhook` on its path. Fails if the path is invalid or taken.
    pub fn register(&self, webhook: Webhook) -> Result<(), Error> {
        check_path(&webhook.path)?;
        let mut registered = self.registered.lock();
        self.add_route(&webhook.path, Route::Admission(Arc::clone(&webhook.hook)))?;
        tracing::info!(path = %webhook.path, "registering webhook");
        registered.webhooks.push(webhook);
        Ok(())
    }

    /// Converts the versions of one kind on `/convert` (served from the first conversion
    /// registered). Fails if the conversions are inconsistent or the kind already has some.
    pub fn register_conversion<H: Kind + Serialize>(
        &self,
        conversion: KindConversion<H>,
    ) -> Result<(), Error> {
        let _registered = self.registered.lock();
        self.shared.conversions.write().add(conversion)?;
        if !self.shared.routes.read().contains_key(CONVERT_PATH) {
            self.add_route(CONVERT_PATH, Route::Conversion)?;
            tracing::info!(path = CONVERT_PATH, "registering conversion webhook");
        }
        Ok(())
    }

    fn add_route(&self, path: &str, route: Route) -> Result<(), Error> {
        let mut routes = self.shared.routes.write();
        if routes.contains_key(path) {
            return Err(Error::DuplicatePath(path.to_owned()));
        }
        routes.insert(path.to_owned(), route);
        self.shared.metrics.path_registered(path);
        Ok(())
    }

    /// The registered admission webhooks.
    pub fn webhooks(&self) -> Vec<Webhook> {
        self.registered.lock().webhooks.clone()
    }

    /// Binds the address, loads the certificate (unless plain HTTP), and serves until
    /// `shutdown` is cancelled; returns the bound address (useful with port 0). The
    /// certificate is re-read every reload interval meanwhile.
    pub async fn start(&self, shutdown: CancellationToken) -> Result<SocketAddr, Error> {
        {
            let mut registered = self.registered.lock();
            if registered.started {
                return Err(Error::AlreadyStarted);
            }
            registered.started = true;
        }
        let started = self.bind_and_serve(shutdown).await;
        if started.is_err() {
            self.registered.lock().started = false;
        }
        started
    }

    async fn bind_and_serve(&self, shutdown: CancellationToken) -> Result<SocketAddr, Error> {
        let config = &self.shared.config;
        let tls = if config.tls {
            let certs = Arc::new(tls::CertReloader::load(
                config.cert_path(),
                config.key_path(),
            )?);
            let server_config = tls::server_config(Arc::clone(&certs))?;
            Some((certs, tokio_rustls::TlsAcceptor::from(server_config)))
        } else {
            None
        };
        let address = config.address();
        let listener = tokio::net::TcpListener::bind(address)
            .await
            .map_err(|source| Error::Bind { address, source })?;
        let bound = listener
            .local_addr()
            .map_err(|source| Error::Bind { address, source })?;
        self.registered.lock().address = Some(bound);
        self.shared.serving.store(true, Ordering::SeqCst);
        tracing::info!(%bound, tls = config.tls, "serving webhooks");
        let acceptor = tls.map(|(certs, acceptor)| {
            tokio::spawn(certs.watch(config.cert_reload_interval, shutdown.clone()));
            acceptor
        });
        tokio::spawn(serve::serve(
            listener,
            acceptor,
            Arc::clone(&self.shared),
            shutdown,
        ));
        Ok(bound)
    }

    /// The address the server listens on, once started.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.registered.lock().address
    }

    /// Whether the server is accepting connections.
    pub fn is_serving(&self) -> bool {
        self.shared.serving.load(Ordering::SeqCst)
    }

    /// A readiness check that passes while the server serves (controller-runtime's
    /// `StartedChecker`); a manager with a webhook server adds it to `/readyz` as `webhook`.
    pub fn started_checker(&self) -> impl Fn() -> Result<(), String> + Send + Sync + 'static {
        let shared = Arc::clone(&self.shared);
        let registered = Arc::clone(&self.registered);
        move || {
            if shared.serving.load(Ordering::SeqCst) {
                Ok(())
            } else if registered.lock().started {
                Err("webhook server is not serving".to_owned())
            } else {
                Err("webhook server has not been started yet".to_owned())
            }
        }
    }

    /// The `ValidatingWebhookConfiguration` `name` of the registered validating webhooks (see
    /// [`validating_webhook_configuration`]).
    pub fn validating_webhook_configuration(
        &self,
        name: &str,
        client: &ClientConfig,
        ca_bundle: &[u8],
    ) -> ValidatingWebhookConfiguration {
        validating_webhook_configuration(name, &self.webhooks(), client, ca_bundle)
    }

    /// The `MutatingWebhookConfiguration` `name` of the registered mutating webhooks (see
    /// [`mutating_webhook_configuration`]).
    pub fn mutating_webhook_configuration(
        &self,
        name: &str,
        client: &ClientConfig,
        ca_bundle: &[u8],
    ) -> MutatingWebhookConfiguration {
        mutating_webhook_configuration(name, &self.webhooks(), client, ca_bundle)
    }
}
