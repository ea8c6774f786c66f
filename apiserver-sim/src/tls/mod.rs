//! Verification of webhook serving certificates as kube-apiserver's Go TLS client does it
//! (`crypto/tls` with `crypto/x509`'s `Certificate.Verify`), so the simulator calls exactly
//! the webhooks a real server calls.
//!
//! Go differs from WebPKI-style verifiers (rustls's webpki) where it matters to webhook
//! authors: a serving certificate that is itself among the roots (the common self-signed
//! certificate that is also its `caBundle`) is trusted as is, whatever its basic
//! constraints say (`openssl req -x509` marks it `CA:TRUE`, which webpki refuses as
//! `CaUsedAsEndEntity`); key usage bits of the leaf are ignored; the names checked are the
//! subjectAltNames only (no Common Name fallback). Everything else is checked: signatures
//! (SHA-1 and MD5 refused), validity periods of every certificate in the chain, issuers being
//! CAs allowed to sign certificates, path length, extended key usage along the chain, DNS
//! and IP name constraints, unhandled critical extensions.
//!
//! - `cert`: the fields of a parsed certificate the checks read;
//! - `der`: the DER reader the certificate is parsed with;
//! - `signature`: a certificate's signature checked against its issuer's key;
//! - `hostname`: Go's `VerifyHostname` and its error texts;
//! - `chain`: Go's `Verify`: chain building, validity, key usage, name constraints;
//! - `roots`: the trusted roots (`caBundle`, or the system's roots without one);
//! - `verifier`: the rustls `ServerCertVerifier` that runs `chain` and keeps Go's message.

pub(crate) mod cert;
pub(crate) mod chain;
pub(crate) mod der;
pub(crate) mod hostname;
pub(crate) mod roots;
pub(crate) mod signature;
pub(crate) mod verifier;

#[cfg(test)]
mod tests;
