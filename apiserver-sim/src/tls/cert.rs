//! The parts of an X.509 certificate that Go's verification reads, parsed once from DER
//! (RFC 5280's `Certificate`, read with [`super::der`]).

use std::net::IpAddr;

use super::der::{self, Element, Reader, tag};
use super::signature::{AlgorithmId, KeyAlgorithm, SignatureAlgorithm};

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

/// GeneralName tags (context-specific, IMPLICIT): `dNSName [2]` and `iPAddress [7]`.
const DNS_NAME: u8 = tag::implicit(2);
const IP_ADDRESS: u8 = tag::implicit(7);

/// Extensions Go's parser understands (so they may be critical); OIDs dotted.
const HANDLED_EXTENSIONS: &[&str] = &[
    "2.5.29.14",         // subject key identifier
    "2.5.29.15",         // key usage
    "2.5.29.17",         // subject alternative name
    "2.5.29.19",         // basic constraints
    "2.5.29.30",         // name constraints
    "2.5.29.31",         // CRL distribution points
    "2.5.29.32",         // certificate policies
    "2.5.29.33",         // policy mappings
    "2.5.29.35",         // authority key identifier
    "2.5.29.36",         // policy constraints
    "2.5.29.37",         // extended key usage
    "2.5.29.54",         // inhibit anyPolicy
    "1.3.6.1.5.5.7.1.1", // authority information access
];

/// The first value of attribute `oid` in a Name, when it is text.
fn name_attribute(name: &[u8], wanted: &str) -> Result<Option<String>, String> {
    let mut rdns = Reader::new(name);
    while !rdns.is_empty() {
        let mut set = rdns.enter(tag::SET, "relative distinguished name")?;
        while !set.is_empty() {
            let mut pair = set.enter(tag::SEQUENCE, "attribute")?;
            let oid = der::oid(pair.expect(tag::OID, "attribute type")?.value)?;
            let value = pair.next_element()?;
            if oid == wanted
                && let Some(text) = der::text(&value)
            {
                return Ok(Some(text));
            }
        }
    }
    Ok(None)
}

fn subtrees(element: Option<Element<'_>>) -> Result<NameSubtrees, String> {
    let mut out = NameSubtrees::default();
    let Some(element) = element else {
        return Ok(out);
    };
    let mut list = Reader::new(element.value);
    while !list.is_empty() {
        let mut subtree = list.enter(tag::SEQUENCE, "name constraint subtree")?;
        let base = subtree.next_element()?;
        match base.tag {
            DNS_NAME => out
                .dns
                .push(String::from_utf8_lossy(base.value).into_owned()),
            IP_ADDRESS if base.value.len() == 8 || base.value.len() == 32 => {
                let (addr, mask) = base.value.split_at(base.value.len() / 2);
                out.ip.push((addr.to_vec(), mask.to_vec()));
            }
            _ => {}
        }
    }
    Ok(out)
}

impl Cert {
    /// Parses a DER certificate; the error is Go's wording of a parse failure.
    pub fn from_der(der: &[u8]) -> Result<Self, String> {
        Self::parse(der).map_err(|e| format!("x509: malformed certificate: {e}"))
    }

    fn parse(der: &[u8]) -> Result<Self, String> {
        let mut outer = Reader::new(der);
        let mut certificate = outer.enter(tag::SEQUENCE, "certificate")?;
        if !outer.is_empty() {
            return Err("trailing data after the certificate".into());
        }
        let tbs = certificate.expect(tag::SEQUENCE, "tbsCertificate")?;
        let signature_algorithm = AlgorithmId::read(&mut certificate, "signatureAlgorithm")?;
        let signature = certificate.expect(tag::BIT_STRING, "signatureValue")?;

        let mut fields = Reader::new(tbs.value);
        let version = match fields.optional(tag::explicit(0), "version")? {
            Some(explicit) => {
                let mut inner = Reader::new(explicit.value);
                der::small_unsigned(inner.expect(tag::INTEGER, "version")?.value)?
            }
            None => 0,
        };
        let serial = fields.expect(tag::INTEGER, "serialNumber")?;
        AlgorithmId::read(&mut fields, "signature")?;
        let issuer = fields.expect(tag::SEQUENCE, "issuer")?;
        let mut validity = fields.enter(tag::SEQUENCE, "validity")?;
        let not_before = der::time(&validity.next_element()?)?;
        let not_after = der::time(&validity.next_element()?)?;
        let subject = fields.expect(tag::SEQUENCE, "subject")?;
        let mut key_info = fields.enter(tag::SEQUENCE, "subjectPublicKeyInfo")?;
        let key_algorithm = AlgorithmId::read(&mut key_info, "public key algorithm")?;
        let public_key = key_info.expect(tag::BIT_STRING, "subjectPublicKey")?;
        fields.optional(tag::implicit(1), "issuerUniqueID")?;
        fields.optional(tag::implicit(2), "subjectUniqueID")?;
        let extensions = fields.optional(tag::explicit(3), "extensions")?;

        let common_name = name_attribute(subject.value, "2.5.4.3")?.unwrap_or_default();
        let display_name = if !common_name.is_empty() {
            common_name.clone()
        } else if let Some(org) = name_attribute(subject.value, "2.5.4.10")? {
            org
        } else {
            format!("serial:{}", der::decimal(serial.value))
        };
        let mut cert = Cert {
            der: der.to_vec(),
            tbs: tbs.whole.to_vec(),
            signature_algorithm: SignatureAlgorithm::of(&signature_algorithm),
            signature: der::bits(signature.value)?.to_vec(),
            key_algorithm: KeyAlgorithm::of(&key_algorithm),
            public_key: der::bits(public_key.value)?.to_vec(),
            raw_subject: subject.whole.to_vec(),
            raw_issuer: issuer.whole.to_vec(),
            display_name,
            common_name,
            not_before,
            not_after,
            version3: version == 2,
            basic_constraints: None,
            key_cert_sign: None,
            ext_key_usage: None,
            has_san: false,
            dns_names: Vec::new(),
            ip_addresses: Vec::new(),
            name_constraints: None,
            unhandled_critical: false,
        };
        if let Some(extensions) = extensions {
            let mut list = Reader::new(extensions.value).enter(tag::SEQUENCE, "extensions")?;
            while !list.is_empty() {
                cert.read_extension(&mut list.enter(tag::SEQUENCE, "extension")?)?;
            }
        }
        Ok(cert)
    }

    /// Reads one Extension into the fields it sets.
    fn read_extension(&mut self, extension: &mut Reader<'_>) -> Result<(), String> {
        let oid = der::oid(extension.expect(tag::OID, "extension id")?.value)?;
        let critical = match extension.optional(tag::BOOLEAN, "critical")? {
            Some(flag) => der::boolean(flag.value)?,
            None => false,
        };
        let value = extension
            .expect(tag::OCTET_STRING, "extension value")?
            .value;
        let mut content = Reader::new(value);
        match oid.as_str() {
            "2.5.29.19" => {
                let mut fields = content.enter(tag::SEQUENCE, "basic constraints")?;
                let is_ca = match fields.optional(tag::BOOLEAN, "cA")? {
                    Some(flag) => der::boolean(flag.value)?,
                    None => false,
                };
                let path_len = match fields.optional(tag::INTEGER, "pathLenConstraint")? {
                    Some(n) => Some(der::small_unsigned(n.value)?),
                    None => None,
                };
                self.basic_constraints = Some((is_ca, path_len));
            }
            "2.5.29.15" => {
                let usage = der::bits(content.expect(tag::BIT_STRING, "key usage")?.value)?;
                // keyCertSign is bit 5, counted from the first byte's most significant bit.
                self.key_cert_sign = Some(usage.first().is_some_and(|b| b & 0x04 != 0));
            }
            "2.5.29.37" => {
                let mut purposes = content.enter(tag::SEQUENCE, "extended key usage")?;
                let (mut any, mut server_auth) = (false, false);
                while !purposes.is_empty() {
                    match der::oid(purposes.expect(tag::OID, "key purpose")?.value)?.as_str() {
                        "2.5.29.37.0" => any = true,
                        "1.3.6.1.5.5.7.3.1" => server_auth = true,
                        _ => {}
                    }
                }
                self.ext_key_usage = Some((any, server_auth));
            }
            "2.5.29.17" => {
                let mut names = content.enter(tag::SEQUENCE, "subject alternative names")?;
                self.has_san = true;
                while !names.is_empty() {
                    let name = names.next_element()?;
                    match name.tag {
                        DNS_NAME => self
                            .dns_names
                            .push(String::from_utf8_lossy(name.value).into_owned()),
                        IP_ADDRESS => self.ip_addresses.extend(ip_of(name.value)),
                        _ => {}
                    }
                }
            }
            "2.5.29.30" => {
                let mut fields = content.enter(tag::SEQUENCE, "name constraints")?;
                let permitted = fields.optional(tag::explicit(0), "permittedSubtrees")?;
                let excluded = fields.optional(tag::explicit(1), "excludedSubtrees")?;
                self.name_constraints = Some(NameConstraints {
                    permitted: subtrees(permitted)?,
                    excluded: subtrees(excluded)?,
                });
            }
            other if critical && !HANDLED_EXTENSIONS.contains(&other) => {
                self.unhandled_critical = true;
            }
            _ => {}
        }
        Ok(())
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
