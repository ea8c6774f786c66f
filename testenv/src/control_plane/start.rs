//! Starting a control plane: the binaries found, the data directory and its watchdog, the
//! credentials, etcd and kube-apiserver together on free ports (again on new ports if one was
//! taken meanwhile) until `/readyz` says `ok`, then the controller-manager if asked for. The
//! work runs on a thread and runtime of its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use parking_lot::Mutex;

use super::assets::{self, ETCD, KUBE_APISERVER, KUBE_CONTROLLER_MANAGER};
use super::files::{Credentials, Layout};
use super::flags::{self, Ports};
use super::process::Server;
use super::ready::{self, NotReady};
use super::watchdog::Watchdog;
use super::{ControlPlane, ControlPlaneBuilder};

/// How many sets of ports a start tries when another process takes one first.
const PORT_ATTEMPTS: usize = 3;

/// Runs `work` on a thread of its own, on a runtime of its own, and returns its output: the
/// start neither depends on the caller's runtime (a paused clock, a runtime that ends with its
/// test while a later test still uses the control plane) nor blocks it.
pub(super) async fn on_own_thread<T, F, Fut>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = T>,
{
    let (done, output) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("kube-rt-testenv control plane start".to_owned())
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("a runtime for the start: {e}"));
            // The caller may have gone: then what was started stops as it is dropped.
            let _ = done.send(runtime.map(|runtime| runtime.block_on(work())));
        })
        .map_err(|e| format!("a thread for the start: {e}"))?;
    output
        .await
        .map_err(|_| "the start's thread ended without an answer".to_owned())?
}

/// The admin's client configuration for the API server at `url`.
pub(super) fn admin_config(url: &str, credentials: &Credentials) -> Result<kube::Config, String> {
    let url = url.parse().map_err(|e| format!("the URL {url}: {e}"))?;
    let mut config = kube::Config::new(url);
    config.root_cert = Some(vec![credentials.ca_der.clone()]);
    config.auth_info.token = Some(credentials.token.clone().into());
    Ok(config)
}

/// Starts the control plane `options` describe (on the calling runtime).
pub(super) async fn control_plane(options: ControlPlaneBuilder) -> Result<ControlPlane, String> {
    let kube_apiserver = assets::binary(&options.assets, KUBE_APISERVER)?;
    let etcd = assets::binary(&options.assets, ETCD)?;
    // Checked before anything starts: a missing binary fails at once.
    if options.controller_manager {
        assets::binary(&options.assets, KUBE_CONTROLLER_MANAGER)?;
    }
    let dir = tempfile::Builder::new()
        .prefix("kube-rt-control-plane-")
        .tempdir()
        .map_err(|e| format!("a data directory: {e}"))?;
    let layout = Layout::new(dir.path());
    let watchdog = Watchdog::start(dir.path()).map_err(|e| format!("the watchdog: {e}"))?;
    let watchdog = Arc::new(Mutex::new(watchdog));
    let credentials = layout
        .write_credentials()
        .map_err(|e| format!("the credentials: {e}"))?;
    let mut attempt = 1;
    let (servers, url) = loop {
        let ports = Ports::free().map_err(|e| format!("free loopback ports: {e}"))?;
        let url = ports.api_url();
        layout
            .write_kubeconfig(&url, &credentials.token)
            .map_err(|e| format!("the kubeconfig: {e}"))?;
        let mut etcd = spawn(
            &watchdog,
            ETCD,
            &etcd,
            &flags::etcd(&layout, &ports),
            &layout,
        )?;
        let kube_apiserver_flags =
            flags::kube_apiserver(&layout, &ports, &options.api_server_flags);
        let mut kube_apiserver = spawn(
            &watchdog,
            KUBE_APISERVER,
            &kube_apiserver,
            &kube_apiserver_flags,
            &layout,
        )?;
        let client = client(&url, &credentials)?;
        let servers = &mut [&mut etcd, &mut kube_apiserver];
        match ready::api_server(&client, servers, options.startup_timeout).await {
            Ok(()) => break (vec![etcd, kube_apiserver], url),
            Err(NotReady::Exited {
                port_taken: true, ..
            }) if attempt < PORT_ATTEMPTS => {
                drop((kube_apiserver, etcd));
                attempt += 1;
                let _ = std::fs::remove_dir_all(layout.etcd_data());
            }
            Err(not_ready) => return Err(not_ready.to_string()),
        }
    };
    let plane = ControlPlane {
        servers: Mutex::new(servers),
        watchdog,
        controller_manager: tokio::sync::OnceCell::new(),
        assets: options.assets,
        layout,
        url,
        credentials,
        startup_timeout: options.startup_timeout,
        dir,
    };
    if options.controller_manager {
        let server = run_controller_manager(
            &plane.assets,
            &plane.layout,
            &plane.url,
            &plane.credentials,
            &plane.watchdog,
            plane.startup_timeout,
        )
        .await?;
        plane.servers.lock().push(server);
        let _ = plane.controller_manager.set(());
    }
    Ok(plane)
}

/// Starts kube-controller-manager beside a running API server, on a thread of its own, and
/// returns it once its controllers work.
pub(super) async fn controller_manager(
    assets: &Path,
    layout: &Layout,
    url: &str,
    credentials: &Credentials,
    watchdog: Arc<Mutex<Watchdog>>,
    timeout: Duration,
) -> Result<Server, String> {
    let (assets, layout, url, credentials): (PathBuf, _, String, _) = (
        assets.to_owned(),
        layout.clone(),
        url.to_owned(),
        credentials.clone(),
    );
    on_own_thread(move || async move {
        run_controller_manager(&assets, &layout, &url, &credentials, &watchdog, timeout).await
    })
    .await?
}

/// Starts kube-controller-manager on the calling runtime and waits until it works.
async fn run_controller_manager(
    assets: &Path,
    layout: &Layout,
    url: &str,
    credentials: &Credentials,
    watchdog: &Mutex<Watchdog>,
    timeout: Duration,
) -> Result<Server, String> {
    let binary = assets::binary(assets, KUBE_CONTROLLER_MANAGER)?;
    let flags = flags::kube_controller_manager(layout);
    let mut server = spawn(watchdog, KUBE_CONTROLLER_MANAGER, &binary, &flags, layout)?;
    let client = client(url, credentials)?;
    ready::controller_manager(&client, &mut server, timeout)
        .await
        .map_err(|not_ready| not_ready.to_string())?;
    Ok(server)
}

/// Starts the server `name` and puts it in the watchdog's care.
fn spawn(
    watchdog: &Mutex<Watchdog>,
    name: &'static str,
    binary: &Path,
    flags: &[String],
    layout: &Layout,
) -> Result<Server, String> {
    let server = Server::spawn(name, binary, flags, layout.log(name))
        .map_err(|e| format!("starting {}: {e}", binary.display()))?;
    watchdog
        .lock()
        .guard(server.pid())
        .map_err(|e| format!("telling the watchdog about {name}: {e}"))?;
    Ok(server)
}

/// An admin client on the calling runtime.
fn client(url: &str, credentials: &Credentials) -> Result<Client, String> {
    Client::try_from(admin_config(url, credentials)?).map_err(|e| e.to_string())
}
