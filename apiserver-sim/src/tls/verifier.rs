//! The rustls side: a `ServerCertVerifier` that verifies the server's certificate with
//! `chain` (Go's rules) and keeps Go's error message for the caller's error text, and that
//! checks handshake signatures with the crypto provider's algorithms.

use std::sync::Arc;

use parking_lot::Mutex;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, OtherError, SignatureScheme};

use super::cert::Cert;
use super::chain;

/// Go's verification message, as the error rustls carries.
#[derive(Debug)]
struct GoVerifyError(String);

impl std::fmt::Display for GoVerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GoVerifyError {}

/// Verifies server certificates against fixed roots as Go's TLS client does.
#[derive(Debug)]
pub(crate) struct GoVerifier {
    roots: Vec<Cert>,
    provider: Arc<CryptoProvider>,
    /// The last refusal, in Go's words (`x509: ...`).
    failure: Mutex<Option<String>>,
}

impl GoVerifier {
    /// A verifier trusting `roots`, with the signature algorithms of `provider`.
    pub fn new(roots: Vec<Cert>, provider: Arc<CryptoProvider>) -> Self {
        Self {
            roots,
            provider,
            failure: Mutex::new(None),
        }
    }

    /// Why the last certificate was refused (Go's message), if it was.
    pub fn failure(&self) -> Option<String> {
        self.failure.lock().clone()
    }

    fn refuse(&self, message: String) -> Error {
        *self.failure.lock() = Some(message.clone());
        Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(
            GoVerifyError(message),
        ))))
    }
}

impl ServerCertVerifier for GoVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let leaf = Cert::from_der(end_entity).map_err(|e| self.refuse(e))?;
        let presented: Vec<Cert> = intermediates
            .iter()
            .filter_map(|der| Cert::from_der(der).ok())
            .collect();
        let host = match server_name {
            ServerName::DnsName(name) => name.as_ref().to_string(),
            ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
            _ => String::new(),
        };
        let now = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
        chain::verify(&leaf, &presented, &self.roots, &host, now)
            .map(|()| ServerCertVerified::assertion())
            .map_err(|e| self.refuse(e))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
