//! [`ServingCerts`]: a certificate authority made on the spot and the serving certificate it
//! signs, written where a webhook server reads them (`tls.crt`, `tls.key`). The CA's PEM is the
//! `caBundle` of the webhook configurations and of a CRD's conversion.

use std::path::Path;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use tempfile::TempDir;

use crate::error::Error;

/// A CA and a serving certificate for a webhook server, in a private temporary directory
/// removed on drop.
#[derive(Debug)]
pub struct ServingCerts {
    dir: TempDir,
    ca_pem: String,
}

impl ServingCerts {
    /// A new CA (`<common_name> CA`) and a serving certificate for `names` (DNS names or IP
    /// addresses, the first one its common name), written as `tls.crt` and `tls.key`.
    pub fn generate(common_name: &str, names: &[String]) -> Result<Self, Error> {
        Self::try_generate(common_name, names).map_err(|e| Error::Certificates(e.to_string()))
    }

    fn try_generate(
        common_name: &str,
        names: &[String],
    ) -> Result<Self, Box<dyn std::error::Error + Send + Sync>> {
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
            .prefix("webhook-certs-")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_are_written_for_the_server() {
        let certs = ServingCerts::generate("test", &["localhost".to_owned()]).unwrap();
        let pem = std::str::from_utf8(certs.ca_pem()).unwrap();
        assert!(pem.starts_with("-----BEGIN CERTIFICATE-----"));
        for file in ["tls.crt", "tls.key"] {
            assert!(certs.dir().join(file).is_file(), "{file}");
        }
        let dir = certs.dir().to_owned();
        drop(certs);
        assert!(!dir.exists(), "removed on drop");
    }
}
