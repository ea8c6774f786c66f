//! The serving certificate: loaded from the certificate directory, re-read on an interval, and
//! handed to every new TLS handshake through rustls' `ResolvesServerCert` — so a rotated
//! certificate (cert-manager renewing the Secret, the kubelet updating the mounted files) is
//! served without a restart, while open connections keep the one they started with.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_util::sync::CancellationToken;

use crate::webhook::error::Error;

/// The current certificate and key, swapped when the files change.
pub(crate) struct CertReloader {
    cert_path: PathBuf,
    key_path: PathBuf,
    current: RwLock<Arc<CertifiedKey>>,
    /// The file contents `current` was loaded from.
    loaded: Mutex<(Vec<u8>, Vec<u8>)>,
}

impl fmt::Debug for CertReloader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CertReloader")
            .field("cert_path", &self.cert_path)
            .field("key_path", &self.key_path)
            .finish_non_exhaustive()
    }
}

impl CertReloader {
    /// Loads the certificate and key; fails with the file and the reason.
    pub(crate) fn load(cert_path: PathBuf, key_path: PathBuf) -> Result<Self, Error> {
        let cert_pem = read(&cert_path)?;
        let key_pem = read(&key_path)?;
        let key = certified_key(&cert_pem, &key_pem, &cert_path, &key_path)?;
        Ok(Self {
            cert_path,
            key_path,
            current: RwLock::new(Arc::new(key)),
            loaded: Mutex::new((cert_pem, key_pem)),
        })
    }

    /// Re-reads the files; swaps the certificate if they changed and load. Returns whether it
    /// swapped.
    pub(crate) fn reload(&self) -> Result<bool, Error> {
        let cert_pem = read(&self.cert_path)?;
        let key_pem = read(&self.key_path)?;
        let mut loaded = self.loaded.lock();
        if loaded.0 == cert_pem && loaded.1 == key_pem {
            return Ok(false);
        }
        let key = certified_key(&cert_pem, &key_pem, &self.cert_path, &self.key_path)?;
        *self.current.write() = Arc::new(key);
        *loaded = (cert_pem, key_pem);
        Ok(true)
    }

    /// Re-reads the files every `interval` until `stop`.
    pub(crate) async fn watch(self: Arc<Self>, interval: Duration, stop: CancellationToken) {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                _ = ticks.tick() => {}
            }
            let reloader = Arc::clone(&self);
            match tokio::task::spawn_blocking(move || reloader.reload()).await {
                Ok(Ok(true)) => {
                    tracing::info!(cert = %self.cert_path.display(), "webhook serving certificate reloaded");
                }
                Ok(Ok(false)) => {}
                Ok(Err(error)) => {
                    tracing::warn!(%error, "cannot reload the webhook serving certificate; keeping the current one");
                }
                Err(error) => tracing::warn!(%error, "webhook certificate reload task failed"),
            }
        }
    }
}

impl ResolvesServerCert for CertReloader {
    fn resolve(&self, _client_hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(Arc::clone(&self.current.read()))
    }
}

/// The TLS settings of the server: TLS 1.2 and 1.3 on the ring provider, HTTP/1.1, the
/// certificate from `certs`.
pub(crate) fn server_config(certs: Arc<CertReloader>) -> Result<Arc<ServerConfig>, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| Error::Certificate {
            path: certs.cert_path.clone(),
            reason: format!("cannot set up TLS: {error}"),
        })?
        .with_no_client_auth()
        .with_cert_resolver(certs);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|error| Error::Certificate {
        path: path.to_owned(),
        reason: format!(
            "cannot read it: {error}; the directory must hold the serving certificate and key (PEM)"
        ),
    })
}

/// The certificate chain of `cert_pem` with the key of `key_pem`, checked to match.
fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
    cert_path: &Path,
    key_path: &Path,
) -> Result<CertifiedKey, Error> {
    let cert_error = |reason: String| Error::Certificate {
        path: cert_path.to_owned(),
        reason,
    };
    let key_error = |reason: String| Error::Certificate {
        path: key_path.to_owned(),
        reason,
    };
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| cert_error(format!("not a PEM certificate chain: {error}")))?;
    if chain.is_empty() {
        return Err(cert_error("holds no PEM certificate".to_owned()));
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem)
        .map_err(|error| key_error(format!("not a PEM private key: {error}")))?;
    let signing_key = rustls::crypto::ring::sign::any_supported_type(&key)
        .map_err(|error| key_error(format!("unsupported private key: {error}")))?;
    let certified = CertifiedKey::new(chain, signing_key);
    certified
        .keys_match()
        .map_err(|error| key_error(format!("does not match the certificate: {error}")))?;
    Ok(certified)
}
