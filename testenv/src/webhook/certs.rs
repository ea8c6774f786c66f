//! [`ServingCerts`]: a certificate authority made on the spot and the serving certificate it
//! signs, written where a webhook server reads them (`tls.crt`, `tls.key`). The CA's PEM is the
//! `caBundle` of the webhook configurations and of a CRD's conversion.

use std::path::Path;

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
        let issued = crate::pki::serving(common_name, names)?;
        // A fresh directory only this user can read (tempfile makes it 0700).
        let dir = tempfile::Builder::new()
            .prefix("webhook-certs-")
            .tempdir()?;
        std::fs::write(dir.path().join("tls.crt"), issued.cert_pem)?;
        std::fs::write(dir.path().join("tls.key"), issued.key_pem)?;
        Ok(Self {
            dir,
            ca_pem: issued.ca_pem,
        })
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
