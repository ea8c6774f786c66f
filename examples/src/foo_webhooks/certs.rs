//! [`ServingCerts`]: a certificate authority made at start and the serving certificate it
//! signs, written where the webhook server reads them (`tls.crt`, `tls.key`). The CA's PEM is
//! the `caBundle` of the webhook configurations and of the CRD's conversion.

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tempfile::TempDir;

/// Why the certificates could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CertError {
    /// Generating a key or signing a certificate failed (or a name was refused).
    #[error("generating certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// The files could not be written.
    #[error("writing certificates: {0}")]
    Write(#[from] std::io::Error),
}

/// A CA and a serving certificate for the webhook server, in a private temporary directory
/// removed on drop.
#[derive(Debug)]
pub struct ServingCerts {
    dir: TempDir,
    ca_pem: String,
}

impl ServingCerts {
    /// A new CA (`<common_name> CA`) and a serving certificate for `names` (DNS names or IP
    /// addresses, the first one its common name), written as `tls.crt` and `tls.key`.
    pub fn generate(common_name: &str, names: &[String]) -> Result<Self, CertError> {
        let ca_key = KeyPair::generate()?;
        let mut ca = CertificateParams::new(Vec::<String>::new())?;
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        ca.distinguished_name
            .push(DnType::CommonName, format!("{common_name} CA"));
        let ca_pem = ca.self_signed(&ca_key)?.pem();
        let issuer = Issuer::new(ca, ca_key);

        let key = KeyPair::generate()?;
        let mut serving = CertificateParams::new(names.to_vec())?;
        serving.distinguished_name.push(
            DnType::CommonName,
            names.first().map_or(common_name, String::as_str),
        );
        serving.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = serving.signed_by(&key, &issuer)?;

        // A fresh directory only this user can read (tempfile makes it 0700).
        let dir = tempfile::Builder::new()
            .prefix("foo-webhooks-certs-")
            .tempdir()?;
        std::fs::write(dir.path().join("tls.crt"), cert.pem())?;
        std::fs::write(dir.path().join("tls.key"), key.serialize_pem())?;
        Ok(Self { dir, ca_pem })
    }

    /// The directory holding `tls.crt` and `tls.key` (the webhook server's `cert_dir`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The CA certificate, PEM: the `caBundle` that lets the API server trust the server.
    pub fn ca_pem(&self) -> &[u8] {
        self.ca_pem.as_bytes()
    }
}
