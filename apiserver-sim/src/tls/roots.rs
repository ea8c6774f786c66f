//! The roots a webhook's certificate is verified against: the certificates of its `caBundle`
//! (PEM; blocks that are not certificates or do not parse are skipped, as Go's
//! `AppendCertsFromPEM` skips them), or, without a `caBundle`, the system's roots (where Go
//! looks for them on Linux: `SSL_CERT_FILE`, else the first bundle file found).

use std::sync::OnceLock;

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

use super::cert::Cert;

/// Where Go's `crypto/x509` looks for the system bundle on Linux, in order.
const SYSTEM_BUNDLES: &[&str] = &[
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/ca-bundle.pem",
    "/etc/pki/tls/cacert.pem",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// The certificates of a PEM bundle.
pub(crate) fn from_pem(pem: &[u8]) -> Vec<Cert> {
    CertificateDer::pem_slice_iter(pem)
        .flatten()
        .filter_map(|der| Cert::from_der(&der).ok())
        .collect()
}

/// The system's roots, read once.
pub(crate) fn system() -> &'static [Cert] {
    static ROOTS: OnceLock<Vec<Cert>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        let from_env = std::env::var_os("SSL_CERT_FILE").map(std::path::PathBuf::from);
        let files = from_env
            .into_iter()
            .chain(SYSTEM_BUNDLES.iter().map(std::path::PathBuf::from));
        for file in files {
            if let Ok(pem) = std::fs::read(&file) {
                return from_pem(&pem);
            }
        }
        Vec::new()
    })
}
