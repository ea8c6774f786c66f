//! A certificate's signature checked against its issuer's public key, with the algorithms
//! Go's `crypto/x509` accepts (RSA PKCS#1 v1.5 and PSS with SHA-2, ECDSA on P-256 and P-384,
//! Ed25519); SHA-1 and MD5 signatures are refused as insecure, as Go refuses them.

use ring::signature::{self as ring_sig, VerificationAlgorithm};

use super::der::{self, Element, Reader, tag};

/// A hash of the SHA-2 family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sha {
    /// SHA-256.
    S256,
    /// SHA-384.
    S384,
    /// SHA-512.
    S512,
}

/// The algorithm a certificate was signed with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SignatureAlgorithm {
    /// RSA PKCS#1 v1.5.
    RsaPkcs1(Sha),
    /// RSA-PSS.
    RsaPss(Sha),
    /// ECDSA.
    Ecdsa(Sha),
    /// Ed25519.
    Ed25519,
    /// SHA-1 or MD5 based: refused (Go's name for it).
    Insecure(&'static str),
    /// Anything else (the OID).
    Unknown(String),
}

/// The type of a subject public key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KeyAlgorithm {
    /// RSA.
    Rsa,
    /// ECDSA on P-256.
    EcP256,
    /// ECDSA on P-384.
    EcP384,
    /// Ed25519.
    Ed25519,
    /// A key type or curve the verifier cannot use.
    Unsupported,
}

fn sha_of_oid(oid: &str) -> Option<Sha> {
    match oid {
        "2.16.840.1.101.3.4.2.1" => Some(Sha::S256),
        "2.16.840.1.101.3.4.2.2" => Some(Sha::S384),
        "2.16.840.1.101.3.4.2.3" => Some(Sha::S512),
        _ => None,
    }
}

/// An AlgorithmIdentifier: the algorithm's OID and its parameters, when present.
#[derive(Debug, Clone)]
pub(crate) struct AlgorithmId<'a> {
    /// The OID, dotted.
    pub oid: String,
    /// The parameters element.
    pub parameters: Option<Element<'a>>,
}

impl<'a> AlgorithmId<'a> {
    /// Reads an AlgorithmIdentifier SEQUENCE.
    pub fn read(reader: &mut Reader<'a>, what: &str) -> Result<Self, String> {
        let mut inner = reader.enter(tag::SEQUENCE, what)?;
        let oid = der::oid(inner.expect(tag::OID, what)?.value)?;
        let parameters = if inner.is_empty() {
            None
        } else {
            Some(inner.next_element()?)
        };
        Ok(Self { oid, parameters })
    }
}

/// The hash of RSASSA-PSS parameters (`hashAlgorithm [0]`, SHA-1 when absent).
fn pss_hash(parameters: Option<&Element<'_>>) -> Option<Sha> {
    let params = parameters.filter(|p| p.tag == tag::SEQUENCE)?;
    let mut fields = Reader::new(params.value);
    let hash = fields.optional(tag::explicit(0), "PSS hash").ok()??;
    let mut inner = Reader::new(hash.value);
    let id = AlgorithmId::read(&mut inner, "PSS hash algorithm").ok()?;
    sha_of_oid(&id.oid)
}

impl SignatureAlgorithm {
    /// The algorithm of a certificate's `signatureAlgorithm`.
    pub fn of(id: &AlgorithmId<'_>) -> Self {
        let oid = id.oid.clone();
        match oid.as_str() {
            "1.2.840.113549.1.1.11" => Self::RsaPkcs1(Sha::S256),
            "1.2.840.113549.1.1.12" => Self::RsaPkcs1(Sha::S384),
            "1.2.840.113549.1.1.13" => Self::RsaPkcs1(Sha::S512),
            "1.2.840.10045.4.3.2" => Self::Ecdsa(Sha::S256),
            "1.2.840.10045.4.3.3" => Self::Ecdsa(Sha::S384),
            "1.2.840.10045.4.3.4" => Self::Ecdsa(Sha::S512),
            "1.3.101.112" => Self::Ed25519,
            "1.2.840.113549.1.1.5" | "1.3.14.3.2.29" => Self::Insecure("SHA1-RSA"),
            "1.2.840.10045.4.1" => Self::Insecure("ECDSA-SHA1"),
            "1.2.840.10040.4.3" => Self::Insecure("DSA-SHA1"),
            "1.2.840.113549.1.1.4" => Self::Insecure("MD5-RSA"),
            "1.2.840.113549.1.1.10" => {
                pss_hash(id.parameters.as_ref()).map_or(Self::Unknown(oid.clone()), Self::RsaPss)
            }
            _ => Self::Unknown(oid),
        }
    }
}

impl KeyAlgorithm {
    /// The type of a certificate's subject public key.
    pub fn of(id: &AlgorithmId<'_>) -> Self {
        match id.oid.as_str() {
            "1.2.840.113549.1.1.1" => Self::Rsa,
            "1.3.101.112" => Self::Ed25519,
            "1.2.840.10045.2.1" => {
                let curve = id
                    .parameters
                    .filter(|p| p.tag == tag::OID)
                    .and_then(|p| der::oid(p.value).ok());
                match curve.as_deref() {
                    Some("1.2.840.10045.3.1.7") => Self::EcP256,
                    Some("1.3.132.0.34") => Self::EcP384,
                    _ => Self::Unsupported,
                }
            }
            _ => Self::Unsupported,
        }
    }
}

/// The ring algorithm for a signature by a key of this type (RSA keys from 1024 bits, as Go).
fn ring_algorithm(
    sig: &SignatureAlgorithm,
    key: &KeyAlgorithm,
) -> Option<&'static dyn VerificationAlgorithm> {
    use KeyAlgorithm as K;
    use SignatureAlgorithm as S;
    Some(match (sig, key) {
        (S::RsaPkcs1(Sha::S256), K::Rsa) => {
            &ring_sig::RSA_PKCS1_1024_8192_SHA256_FOR_LEGACY_USE_ONLY
        }
        (S::RsaPkcs1(Sha::S384), K::Rsa) => &ring_sig::RSA_PKCS1_2048_8192_SHA384,
        (S::RsaPkcs1(Sha::S512), K::Rsa) => {
            &ring_sig::RSA_PKCS1_1024_8192_SHA512_FOR_LEGACY_USE_ONLY
        }
        (S::RsaPss(Sha::S256), K::Rsa) => &ring_sig::RSA_PSS_2048_8192_SHA256,
        (S::RsaPss(Sha::S384), K::Rsa) => &ring_sig::RSA_PSS_2048_8192_SHA384,
        (S::RsaPss(Sha::S512), K::Rsa) => &ring_sig::RSA_PSS_2048_8192_SHA512,
        (S::Ecdsa(Sha::S256), K::EcP256) => &ring_sig::ECDSA_P256_SHA256_ASN1,
        (S::Ecdsa(Sha::S384), K::EcP256) => &ring_sig::ECDSA_P256_SHA384_ASN1,
        (S::Ecdsa(Sha::S256), K::EcP384) => &ring_sig::ECDSA_P384_SHA256_ASN1,
        (S::Ecdsa(Sha::S384), K::EcP384) => &ring_sig::ECDSA_P384_SHA384_ASN1,
        (S::Ed25519, K::Ed25519) => &ring_sig::ED25519,
        _ => return None,
    })
}

/// Checks `signature` over `signed` with a `key` of type `key_type`; the error in Go's words.
pub(crate) fn verify(
    algorithm: &SignatureAlgorithm,
    signed: &[u8],
    signature: &[u8],
    key_type: &KeyAlgorithm,
    key: &[u8],
) -> Result<(), String> {
    if let SignatureAlgorithm::Insecure(name) = algorithm {
        return Err(format!(
            "x509: cannot verify signature: insecure algorithm {name}"
        ));
    }
    let Some(alg) = ring_algorithm(algorithm, key_type) else {
        return Err("x509: cannot verify signature: algorithm unimplemented".to_string());
    };
    ring_sig::UnparsedPublicKey::new(alg, key)
        .verify(signed, signature)
        .map_err(|_| match key_type {
            KeyAlgorithm::Rsa => "crypto/rsa: verification error".to_string(),
            KeyAlgorithm::Ed25519 => "x509: Ed25519 verification failure".to_string(),
            _ => "x509: ECDSA verification failure".to_string(),
        })
}
