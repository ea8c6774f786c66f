//! [`WebhookServerConfig`]: where the webhook server listens, where its certificate is, how often
//! the certificate is re-read, and the limits of one review.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The port the webhook server listens on by default (controller-runtime's).
pub const DEFAULT_WEBHOOK_PORT: u16 = 9443;
/// The serving certificate's file name in the certificate directory (cert-manager's and
/// controller-runtime's layout).
pub const DEFAULT_CERT_NAME: &str = "tls.crt";
/// The private key's file name in the certificate directory.
pub const DEFAULT_KEY_NAME: &str = "tls.key";
/// How often the certificate files are re-read by default (controller-runtime's certificate
/// watcher polls this often too).
pub const DEFAULT_CERT_RELOAD_INTERVAL: Duration = Duration::from_secs(10);
/// How long one handler may take by default: the API server's default webhook timeout.
pub const DEFAULT_HANDLER_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest review body accepted by default: controller-runtime's 7 MiB (two objects of at
/// most 3 MiB each, and the rest of the review).
pub const DEFAULT_MAX_BODY_BYTES: usize = 7 * 1024 * 1024;

/// Settings of a [`WebhookServer`](crate::webhook::WebhookServer); give them to
/// [`ManagerBuilder::webhook_server`](crate::manager::ManagerBuilder::webhook_server) or
/// [`WebhookServer::new`](crate::webhook::WebhookServer::new).
///
/// By default the server listens on every address on port 9443, serves HTTPS with `tls.crt` and
/// `tls.key` from `<temp dir>/k8s-webhook-server/serving-certs` (controller-runtime's default;
/// mount the Secret there or set [`cert_dir`](Self::cert_dir)), and re-reads them every 10 s, so
/// a rotated certificate is served without a restart.
#[derive(Clone, Debug)]
pub struct WebhookServerConfig {
    pub(crate) host: IpAddr,
    pub(crate) port: u16,
    pub(crate) cert_dir: PathBuf,
    pub(crate) cert_name: String,
    pub(crate) key_name: String,
    pub(crate) tls: bool,
    pub(crate) cert_reload_interval: Duration,
    pub(crate) handler_timeout: Duration,
    pub(crate) max_body_bytes: usize,
}

impl Default for WebhookServerConfig {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: DEFAULT_WEBHOOK_PORT,
            cert_dir: std::env::temp_dir()
                .join("k8s-webhook-server")
                .join("serving-certs"),
            cert_name: DEFAULT_CERT_NAME.to_owned(),
            key_name: DEFAULT_KEY_NAME.to_owned(),
            tls: true,
            cert_reload_interval: DEFAULT_CERT_RELOAD_INTERVAL,
            handler_timeout: DEFAULT_HANDLER_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

impl WebhookServerConfig {
    /// The default settings (see [`WebhookServerConfig`]).
    pub fn new() -> Self {
        Self::default()
    }

    /// The address to listen on (default: every IPv4 address).
    pub fn host(mut self, host: IpAddr) -> Self {
        self.host = host;
        self
    }

    /// The port to listen on (default 9443). Port 0 picks a free port; read it from
    /// [`WebhookServer::local_addr`](crate::webhook::WebhookServer::local_addr) or
    /// [`Manager::addresses`](crate::manager::Manager::addresses).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The directory holding the serving certificate and key (default:
    /// `<temp dir>/k8s-webhook-server/serving-certs`).
    pub fn cert_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cert_dir = dir.into();
        self
    }

    /// The certificate's file name in the directory (default `tls.crt`): PEM, the serving
    /// certificate first, then any intermediates.
    pub fn cert_name(mut self, name: impl Into<String>) -> Self {
        self.cert_name = name.into();
        self
    }

    /// The key's file name in the directory (default `tls.key`): PEM, PKCS#8, PKCS#1 or SEC1.
    pub fn key_name(mut self, name: impl Into<String>) -> Self {
        self.key_name = name.into();
        self
    }

    /// How often the certificate and key are re-read (default 10 s). A changed pair is served
    /// to every new connection from then on; a pair that does not load (half written during a
    /// rotation, say) is logged and the previous one kept.
    pub fn cert_reload_interval(mut self, interval: Duration) -> Self {
        self.cert_reload_interval = interval;
        self
    }

    /// Serve plain HTTP instead of HTTPS. The API server calls webhooks over HTTPS only; this is
    /// for local experiments behind a TLS-terminating proxy. Nothing is read from the
    /// certificate directory.
    pub fn plain_http(mut self) -> Self {
        self.tls = false;
        self
    }

    /// How long one handler may take (default 10 s, the API server's default webhook timeout).
    /// A handler that takes longer is cancelled and the review answered with an error; the
    /// server keeps serving. Handlers must be `async` and not block their thread: a blocking
    /// handler cannot be cancelled.
    pub fn handler_timeout(mut self, timeout: Duration) -> Self {
        self.handler_timeout = timeout;
        self
    }

    /// The largest review body accepted (default 7 MiB, controller-runtime's limit); a larger
    /// one is answered `400 Bad Request` without being read further.
    pub fn max_body_bytes(mut self, bytes: usize) -> Self {
        self.max_body_bytes = bytes;
        self
    }

    /// The address the server binds.
    pub(crate) fn address(&self) -> SocketAddr {
        SocketAddr::new(self.host, self.port)
    }

    /// Whether the server serves HTTPS.
    pub fn is_tls(&self) -> bool {
        self.tls
    }

    /// The certificate file's path.
    pub fn cert_path(&self) -> PathBuf {
        self.cert_dir.join(&self.cert_name)
    }

    /// The key file's path.
    pub fn key_path(&self) -> PathBuf {
        self.cert_dir.join(&self.key_name)
    }

    /// The certificate directory.
    pub fn cert_dir_path(&self) -> &Path {
        &self.cert_dir
    }
}
