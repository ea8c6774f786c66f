//! Credentials made on the spot: a certificate authority and the serving certificate it signs
//! (a webhook server's, the control plane's API server's), a signing key, and a random secret.

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};

/// What a credential failed with.
pub(crate) type PkiError = Box<dyn std::error::Error + Send + Sync>;

/// A new certificate authority and a serving certificate it signed.
pub(crate) struct Serving {
    /// The CA's certificate, PEM: what a client trusts.
    pub(crate) ca_pem: String,
    /// The CA's certificate, DER.
    pub(crate) ca_der: Vec<u8>,
    /// The serving certificate, PEM.
    pub(crate) cert_pem: String,
    /// The serving certificate's private key, PEM (PKCS #8).
    pub(crate) key_pem: String,
}

/// A new CA (`<common_name> CA`) and a serving certificate for `names` (DNS names or IP
/// addresses, the first one its common name). ECDSA P-256 keys: made in microseconds, and every
/// TLS stack involved (Go's, rustls) takes them.
pub(crate) fn serving(common_name: &str, names: &[String]) -> Result<Serving, PkiError> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    ca.distinguished_name
        .push(DnType::CommonName, format!("{common_name} CA"));
    let ca_cert = ca.self_signed(&ca_key)?;
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
    Ok(Serving {
        ca_pem: ca_cert.pem(),
        ca_der: ca_cert.der().to_vec(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// A new ECDSA P-256 signing key: its private key (PEM, PKCS #8) and public key (PEM).
pub(crate) fn signing_key() -> Result<(String, String), PkiError> {
    let key = KeyPair::generate()?;
    Ok((key.serialize_pem(), key.public_key_pem()))
}

/// `bytes` random bytes from the operating system, as lowercase hex.
pub(crate) fn random_hex(bytes: usize) -> Result<String, PkiError> {
    use ring::rand::SecureRandom;
    let mut buffer = vec![0; bytes];
    ring::rand::SystemRandom::new()
        .fill(&mut buffer)
        .map_err(|_| "the operating system gave no random bytes")?;
    Ok(buffer.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_serving_certificate_and_its_ca_are_pem() {
        let issued = serving("test", &["localhost".to_owned()]).unwrap();
        assert!(issued.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(issued.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(issued.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert_ne!(issued.ca_pem, issued.cert_pem);
    }

    #[test]
    fn a_signing_key_has_a_private_and_a_public_half() {
        let (private, public) = signing_key().unwrap();
        assert!(private.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
    }

    #[test]
    fn random_hex_is_hex_of_the_length_asked_and_differs() {
        let (a, b) = (random_hex(16).unwrap(), random_hex(16).unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_ne!(a, b);
    }
}
