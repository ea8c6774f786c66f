//! The parts of an X.509 certificate that Go's verification reads, parsed once from DER.

use std::net::IpAddr;

use x509_parser::extensions::{GeneralName, ParsedExtension};
use x509_parser::prelude::{FromDer, X509Certificate};

use super::signature::{KeyAlgorithm, SignatureAlgorithm};

/// A name constraint subtree of a CA (DNS names and IP ranges; other forms are ignored).
#[derive(Debug, Clone, Default)]
pub(crate) struct NameSubtrees {
    /// DNS name constraints (`example.com` or `.example.com`).
    pub dns: Vec<String>,
    /// IP ranges as (address, mask) bytes of equal length.
    pub ip: Vec<(Vec<u8>, Vec<u8>)>,
}

/// A certificate's permitted and excluded names.
#[derive(Debug, Clone, Default)]
pub(crate) struct NameConstraints {
    /// Names every leaf name must fall under (per name type, when any is given).
    pub permitted: NameSubtrees,
    /// Names no leaf name may fall under.
    pub excluded: NameSubtrees,
}

/// A parsed certificate.
#[derive(Debug, Clone)]
pub(crate) struct Cert {
    /// The whole certificate, DER.
    pub der: Vec<u8>,
    /// The signed part (TBSCertificate), DER.
    pub tbs: Vec<u8>,
    /// The algorithm the issuer signed with.
    pub signature_algorithm: SignatureAlgorithm,
    /// The signature over `tbs`.
    pub signature: Vec<u8>,
    /// The subject's public key type.
    pub key_algorithm: KeyAlgorithm,
    /// The subject's public key (the BIT STRING's bytes).
    pub public_key: Vec<u8>,
    /// Raw DER of the subject and issuer names (compared bytewise, as Go does).
    pub raw_subject: Vec<u8>,
    /// See `raw_subject`.
    pub raw_issuer: Vec<u8>,
    /// The name Go's messages give a certificate: Common Name, else Organization, else
    /// `serial:N`.
    pub display_name: String,
    /// The subject Common Name (for the legacy-Common-Name hint of name errors).
    pub common_name: String,
    /// Validity period, Unix seconds.
    pub not_before: i64,
    /// See `not_before`.
    pub not_after: i64,
    /// An X.509 v3 certificate.
    pub version3: bool,
    /// Basic constraints, when present: `(is CA, max path length)`.
    pub basic_constraints: Option<(bool, Option<u32>)>,
    /// Key usage, when present: whether it allows signing certificates.
    pub key_cert_sign: Option<bool>,
    /// Extended key usage, when present: `(any, serverAuth)`.
    pub ext_key_usage: Option<(bool, bool)>,
    /// Whether the subjectAltName extension is present.
    pub has_san: bool,
    /// subjectAltName DNS names.
    pub dns_names: Vec<String>,
    /// subjectAltName IP addresses.
    pub ip_addresses: Vec<IpAddr>,
    /// Name constraints, when present.
    pub name_constraints: Option<NameConstraints>,
    /// A critical extension Go does not handle.
    pub unhandled_critical: bool,
}

fn ip_of(bytes: &[u8]) -> Option<IpAddr> {
    match bytes.len() {
        4 => <[u8; 4]>::try_from(bytes).ok().map(IpAddr::from),
        16 => <[u8; 16]>::try_from(bytes).ok().map(IpAddr::from),
        _ => None,
    }
}

fn subtrees(list: Option<&Vec<x509_parser::extensions::GeneralSubtree<'_>>>) -> NameSubtrees {
    let mut out = NameSubtrees::default();
    for subtree in list.into_iter().flatten() {
        match &subtree.base {
            GeneralName::DNSName(name) => out.dns.push((*name).to_string()),
            GeneralName::IPAddress(bytes) if bytes.len() == 8 || bytes.len() == 32 => {
                let (addr, mask) = bytes.split_at(bytes.len() / 2);
                out.ip.push((addr.to_vec(), mask.to_vec()));
            }
            _ => {}
        }
    }
    out
}

impl Cert {
    /// Parses a DER certificate; the error is Go's wording of a parse failure.
    pub fn from_der(der: &[u8]) -> Result<Self, String> {
        let (_, x) = X509Certificate::from_der(der)
            .map_err(|e| format!("x509: malformed certificate: {e}"))?;
        let subject = x.subject();
        let common_name = subject
            .iter_common_name()
            .next()
            .and_then(|a| a.as_str().ok())
            .unwrap_or_default()
            .to_string();
        let organization = subject
            .iter_organization()
            .next()
            .and_then(|a| a.as_str().ok())
            .map(str::to_string);
        let display_name = if !common_name.is_empty() {
            common_name.clone()
        } else if let Some(org) = organization {
            org
        } else {
            format!("serial:{}", x.tbs_certificate.serial)
        };
        let mut cert = Cert {
            der: der.to_vec(),
            tbs: x.tbs_certificate.as_ref().to_vec(),
            signature_algorithm: SignatureAlgorithm::of(&x.signature_algorithm),
            signature: x.signature_value.data.to_vec(),
            key_algorithm: KeyAlgorithm::of(&x.public_key().algorithm),
            public_key: x.public_key().subject_public_key.data.to_vec(),
            raw_subject: x.subject().as_raw().to_vec(),
            raw_issuer: x.issuer().as_raw().to_vec(),
            display_name,
            common_name,
            not_before: x.validity().not_before.timestamp(),
            not_after: x.validity().not_after.timestamp(),
            version3: x.version().0 == 2,
            basic_constraints: None,
            key_cert_sign: None,
            ext_key_usage: None,
            has_san: false,
            dns_names: Vec::new(),
            ip_addresses: Vec::new(),
            name_constraints: None,
            unhandled_critical: false,
        };
        for ext in x.extensions() {
            match ext.parsed_extension() {
                ParsedExtension::BasicConstraints(bc) => {
                    cert.basic_constraints = Some((bc.ca, bc.path_len_constraint));
                }
                ParsedExtension::KeyUsage(ku) => cert.key_cert_sign = Some(ku.key_cert_sign()),
                ParsedExtension::ExtendedKeyUsage(eku) => {
                    cert.ext_key_usage = Some((eku.any, eku.server_auth));
                }
                ParsedExtension::SubjectAlternativeName(san) => {
                    cert.has_san = true;
                    for name in &san.general_names {
                        match name {
                            GeneralName::DNSName(d) => cert.dns_names.push((*d).to_string()),
                            GeneralName::IPAddress(b) => cert.ip_addresses.extend(ip_of(b)),
                            _ => {}
                        }
                    }
                }
                ParsedExtension::NameConstraints(nc) => {
                    cert.name_constraints = Some(NameConstraints {
                        permitted: subtrees(nc.permitted_subtrees.as_ref()),
                        excluded: subtrees(nc.excluded_subtrees.as_ref()),
                    });
                }
                ParsedExtension::UnsupportedExtension { .. }
                | ParsedExtension::ParseError { .. }
                    if ext.critical =>
                {
                    cert.unhandled_critical = true;
                }
                _ => {}
            }
        }
        Ok(cert)
    }

    /// Whether the certificate may sign others (Go's `CheckSignatureFrom` precondition):
    /// a v3 certificate needs basic constraints with CA set; key usage, when present, must
    /// allow certificate signing.
    pub fn may_sign_certificates(&self) -> bool {
        let ca_ok = match self.basic_constraints {
            Some((is_ca, _)) => is_ca,
            None => !self.version3,
        };
        ca_ok && self.key_cert_sign != Some(false)
    }
}
