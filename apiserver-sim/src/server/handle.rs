//! [`ApiServerBuilder`] and [`ApiServer`]: options, start (the tasks the server runs),
//! address, client, kubeconfig, shutdown.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use kube::config::Kubeconfig;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::faults::chaos::config::ChaosConfig;
use crate::shared::{ServerConfig, Shared};

/// Namespaces that exist from startup.
pub const DEFAULT_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];

/// Builder of an [`ApiServer`].
#[derive(Debug, Clone, Default)]
pub struct ApiServerBuilder {
    port: u16,
    config: ServerConfig,
}

impl ApiServerBuilder {
    /// Listen on this port of 127.0.0.1 (default 0: any free port).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Events retained per resource for watch resumption (default 10 000).
    pub fn history_limit(mut self, n: usize) -> Self {
        self.config.store.history_limit = n;
        self
    }

    /// Per-resource watch fan-out buffer; a watcher lagging further behind is closed (default 65 536).
    pub fn watch_buffer(mut self, n: usize) -> Self {
        self.config.store.broadcast_capacity = n;
        self
    }

    /// Interval of periodic watch bookmarks (default 60 s; sent only when the RV moved).
    pub fn bookmark_interval(mut self, d: Duration) -> Self {
        self.config.bookmark_interval = d;
        self
    }

    /// Watch duration when a client sends no `timeoutSeconds` (default 30 min).
    pub fn default_watch_timeout(mut self, d: Duration) -> Self {
        self.config.default_watch_timeout = d;
        self
    }

    /// Largest request body accepted, in bytes (default [`crate::BODY_LIMIT`]).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// Enables the workload simulator (off unless called): the controllers and the node a
    /// cluster runs workloads with. A node `sim-node` is registered and every pod is
    /// scheduled to it; its simulated kubelet starts a pod's containers at once and `delay`
    /// later the pod is `Running` and `Ready` with a pod IP (a pod whose `restartPolicy` is
    /// `Never` or `OnFailure` then exits 0 another `delay` later: `Succeeded`), and a deleted
    /// pod is removed `delay` after its deletion began. Deployments make ReplicaSets
    /// (`<name>-<pod-template-hash>`, with revision annotations, so `kubectl rollout
    /// status|restart|undo|history` work) and roll out with their strategy; ReplicaSets keep
    /// their pods (recreating deleted ones); Jobs run their pods to completion
    /// (`SuccessCriteriaMet` and `Complete`); Services with a selector get Endpoints and an
    /// EndpointSlice of their pods. Statuses are computed as upstream computes them (a
    /// Deployment's from its ReplicaSets). Every write goes through the normal write path
    /// as `kube-controller-manager` or `kubelet`. Timing uses Tokio time (paused-time tests
    /// work). 1 s is a typical value (the default of the binary's `--workloads`).
    pub fn workload_simulator(mut self, delay: Duration) -> Self {
        self.config.workload_delay = Some(delay);
        self
    }

    /// Enables chaos mode (off unless called): from the moment the server starts, a task
    /// it owns drops watches, compacts history and restarts the server on a timeline
    /// seeded by `config.seed`, and a seeded fraction of API requests fail (500/503, 429
    /// with `Retry-After`), are delayed or are answered in tiny writes, at the rates of
    /// `config.profile` (see [`crate::ChaosRates`]). Faults injected are counted in
    /// [`ApiServer::chaos_stats`]; [`ApiServer::stop_chaos`] ends them (to let clients
    /// converge before checking). `/__sim/*`, health, version and discovery requests are
    /// never failed.
    pub fn chaos(mut self, config: ChaosConfig) -> Self {
        self.config.chaos = Some(config);
        self
    }

    /// Makes the webhook service `namespace/name` (on `port`, or on every port with `None`)
    /// reachable at `base_url` (`https://127.0.0.1:PORT`, optionally with a path prefix):
    /// admission and conversion webhooks configured with `clientConfig.service` are called
    /// there, over HTTPS, verifying the server certificate for `<name>.<namespace>.svc`
    /// against the webhook's `caBundle`. Unmapped services fail like an unreachable service.
    pub fn service_endpoint(
        mut self,
        namespace: &str,
        name: &str,
        port: Option<u16>,
        base_url: &str,
    ) -> Self {
        self.config
            .service_endpoints
            .insert(namespace, name, port, base_url);
        self
    }

    /// Authenticates every request with a bearer token and authorizes it with RBAC, as a
    /// real cluster does (default: off, every request passes). With it on, [`ApiServer::client`]
    /// and the written kubeconfig carry the admin token (`system:admin` in `system:masters`),
    /// ServiceAccount tokens come from [`ApiServer::service_account_token`] or the TokenRequest
    /// API, requests without a valid token get 401, and refusals get upstream's 403
    /// `Forbidden` (see [`ApiServer::denials`]). The bootstrap roles `cluster-admin`,
    /// `system:discovery`, `system:public-info-viewer` and `system:basic-user` and their
    /// bindings are stored at start.
    pub fn rbac(mut self, enabled: bool) -> Self {
        self.config.rbac = enabled;
        self
    }

    /// Admits writes with `OwnerReferencesPermissionEnforcement`, the admission plugin
    /// hardened clusters (OpenShift among them) turn on and kube-apiserver leaves off by
    /// default (default: off here too; it takes effect with [`rbac`](Self::rbac) on). A write
    /// that changes an object's owner references needs `delete` on the object (creates
    /// excepted), and each reference newly set with `blockOwnerDeletion: true` needs `update` on
    /// the owner's `finalizers` subresource; refusals are upstream's 403 `Forbidden` (`cannot set
    /// blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers
    /// on: …`).
    pub fn owner_references_permission_enforcement(mut self, enabled: bool) -> Self {
        self.config.owner_references_permission_enforcement = enabled;
        self
    }

    /// Answers lists from resourceVersion "0" as kube-apiserver's watch cache answers them
    /// (default: on): the whole list at once, `limit` ignored. Off, they are paginated as
    /// kube-apiserver paginates them with `--watch-cache=false` (from etcd), which makes
    /// client-go's reflector page its later relists too.
    pub fn watch_cache(mut self, enabled: bool) -> Self {
        self.config.watch_cache = enabled;
        self
    }

    /// Makes every namespace hold what kube-controller-manager puts in each (off unless
    /// called): its `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap, whose
    /// `ca.crt` is `root_ca_pem` (the simulator serves plain HTTP, so this is whatever bundle
    /// the caller wants workloads to find there). Both are made again when deleted.
    pub fn namespace_defaults(mut self, root_ca_pem: impl Into<String>) -> Self {
        self.config.root_ca = Some(root_ca_pem.into());
        self.config.store.namespace_defaults = true;
        self
    }

    /// Binds the socket, creates the default namespaces and starts serving.
    /// Must be called inside a Tokio runtime.
    pub async fn start(self) -> Result<ApiServer> {
        let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, self.port));
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| Error::Bind {
                addr: addr.to_string(),
                source,
            })?;
        let local = listener.local_addr().map_err(|source| Error::Bind {
            addr: addr.to_string(),
            source,
        })?;
        let shared = Shared::new(self.config);
        let _ = shared.addr.set(local);
        {
            let mut st = shared.state.lock();
            let info = st
                .lookup("", "v1", "namespaces")
                .ok_or_else(|| Error::UnknownResource("namespaces".into()))?;
            for ns in DEFAULT_NAMESPACES {
                crate::ops::create(
                    &mut st,
                    &info,
                    "v1",
                    None,
                    json!({"metadata": {"name": ns}}),
                    &Default::default(),
                )?;
            }
            if shared.config.rbac {
                seed_bootstrap_policy(&mut st)?;
            }
        }
        let serve = tokio::spawn(crate::http::serve(listener, shared.clone()));
        let controllers = tokio::spawn(crate::controllers::run(shared.clone()));
        let mut tasks = vec![serve, controllers];
        if shared.chaos.is_some() {
            tasks.push(tokio::spawn(run_chaos(shared.clone())));
        }
        if let Some(delay) = shared.config.workload_delay {
            tasks.push(tokio::spawn(crate::controllers::workloads::run(
                shared.clone(),
                delay,
            )));
        }
        tracing::info!(addr = %local, "apiserver-sim listening");
        Ok(ApiServer {
            shared,
            addr: local,
            tasks,
        })
    }
}

/// The chaos timeline task (see [`ApiServerBuilder::chaos`]), until chaos stops or the
/// server shuts down.
async fn run_chaos(shared: Arc<Shared>) {
    let Some(chaos) = &shared.chaos else {
        return;
    };
    let mut shutdown = shared.shutdown.subscribe();
    let shutdown = crate::shared::shutting_down(&mut shutdown);
    crate::faults::chaos::runner::run(chaos, &*shared, shutdown).await;
}

/// An API server simulator serving on loopback until dropped or [`ApiServer::shutdown`].
pub struct ApiServer {
    /// State shared with the server's tasks (the seed, inspect and hook methods use it).
    pub(super) shared: Arc<Shared>,
    addr: SocketAddr,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("addr", &self.addr)
            .finish()
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        self.shared.shutdown.send_replace(true);
    }
}

impl ApiServer {
    /// A builder with defaults (any free port).
    pub fn builder() -> ApiServerBuilder {
        ApiServerBuilder::default()
    }

    /// Starts a server with defaults.
    pub async fn start() -> Result<Self> {
        Self::builder().start().await
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The base URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A `kube::Client` for this server (default namespace `default`); with
    /// [RBAC](ApiServerBuilder::rbac) on, it authenticates as the cluster admin.
    pub fn client(&self) -> Result<kube::Client> {
        self.client_with(self.admin_token())
    }

    /// A client sending `token` as its bearer token, or none.
    pub(super) fn client_with(&self, token: Option<&str>) -> Result<kube::Client> {
        let uri: http::Uri = self
            .url()
            .parse()
            .map_err(|e: http::uri::InvalidUri| Error::Client(e.to_string()))?;
        let mut config = kube::Config::new(uri);
        config.default_namespace = "default".into();
        config.auth_info.token = token.map(|t| t.to_string().into());
        kube::Client::try_from(config).map_err(|e| Error::Client(e.to_string()))
    }

    fn kubeconfig_json(&self) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "apiserver-sim", "cluster": {"server": self.url()}}],
            "users": [{"name": "apiserver-sim", "user": match self.admin_token() {
                Some(token) => json!({"token": token}),
                None => json!({}),
            }}],
            "contexts": [{"name": "apiserver-sim",
                          "context": {"cluster": "apiserver-sim", "user": "apiserver-sim", "namespace": "default"}}],
            "current-context": "apiserver-sim",
        })
    }

    /// A kubeconfig pointing at this server (with RBAC on, with the admin token), as
    /// `kube::Config` reads it.
    pub fn kubeconfig(&self) -> Result<Kubeconfig> {
        Ok(serde_json::from_value(self.kubeconfig_json())?)
    }

    /// Writes the kubeconfig (JSON, which kubectl reads as YAML) to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let mut text = serde_json::to_string_pretty(&self.kubeconfig_json())?;
        text.push('\n');
        std::fs::write(path, text).map_err(|source| Error::WriteKubeconfig {
            path: path.display().to_string(),
            source,
        })
    }

    /// Stops serving: ends watches and connections, waits for the accept loop.
    pub async fn shutdown(mut self) {
        self.shared.shutdown.send_replace(true);
        for t in self.tasks.drain(..) {
            let _ = t.await;
        }
    }
}

/// Stores the bootstrap policy of RBAC mode (`auth/bootstrap.rs`).
fn seed_bootstrap_policy(st: &mut crate::store::State) -> crate::machinery::status::ApiResult<()> {
    let (roles, bindings) = crate::auth::bootstrap::policy();
    for (plural, objects) in [("clusterroles", roles), ("clusterrolebindings", bindings)] {
        let info = st
            .lookup(crate::auth::rbac::GROUP, "v1", plural)
            .ok_or_else(crate::machinery::status::ApiError::unknown_path)?;
        for obj in objects {
            crate::ops::create(st, &info, "v1", None, obj, &Default::default())?;
        }
    }
    Ok(())
}
