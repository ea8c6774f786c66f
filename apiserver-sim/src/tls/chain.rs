//! Go's `Certificate.Verify` for a TLS server certificate: the leaf's validity period and
//! name first; then trust: a leaf that is itself one of the roots is a chain of its own,
//! else chains are built through the presented intermediates to a root, each issuer found
//! by subject name, checked as a signer (CA, may sign certificates) and by signature, within
//! its validity period and path length; a chain must allow server authentication along its
//! extended key usages and respect every CA's DNS and IP name constraints.

use std::net::IpAddr;

use super::cert::{Cert, NameSubtrees};
use super::hostname;
use super::signature;

/// Signature checks allowed while building chains (Go's `maxChainSignatureChecks`).
const MAX_SIGNATURE_CHECKS: usize = 100;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Leaf,
    Intermediate,
    Root,
}

/// RFC 3339 in UTC, as Go formats times in validity errors.
fn rfc3339(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| secs.to_string())
}

/// Go's `isValid`: critical extensions, issuer name, validity period, CA for intermediates,
/// path length. `chain` is the chain below `cert` (leaf first).
fn is_valid(cert: &Cert, role: Role, chain: &[&Cert], now: i64) -> Result<(), String> {
    if cert.unhandled_critical {
        return Err("x509: unhandled critical extension".into());
    }
    if let Some(child) = chain.last()
        && child.raw_issuer != cert.raw_subject
    {
        return Err("x509: issuer name does not match subject from issuing certificate".into());
    }
    if now < cert.not_before {
        return Err(format!(
            "x509: certificate has expired or is not yet valid: current time {} is before {}",
            rfc3339(now),
            rfc3339(cert.not_before)
        ));
    }
    if now > cert.not_after {
        return Err(format!(
            "x509: certificate has expired or is not yet valid: current time {} is after {}",
            rfc3339(now),
            rfc3339(cert.not_after)
        ));
    }
    if role == Role::Intermediate && cert.basic_constraints.is_none_or(|(ca, _)| !ca) {
        return Err("x509: certificate is not authorized to sign other certificates".into());
    }
    if let Some((_, Some(max))) = cert.basic_constraints
        && chain.len().saturating_sub(1) > max as usize
    {
        return Err("x509: too many intermediates for path length constraint".into());
    }
    Ok(())
}

/// Go's `CheckSignatureFrom`.
fn check_signature_from(child: &Cert, parent: &Cert) -> Result<(), String> {
    if !parent.may_sign_certificates() {
        return Err(
            "x509: invalid signature: parent certificate cannot sign this kind of certificate"
                .into(),
        );
    }
    signature::verify(
        &child.signature_algorithm,
        &child.tbs,
        &child.signature,
        &parent.key_algorithm,
        &parent.public_key,
    )
}

/// Go's `alreadyInChain`, simplified to the same subject and key.
fn already_in_chain(candidate: &Cert, chain: &[&Cert]) -> bool {
    chain
        .iter()
        .any(|c| c.raw_subject == candidate.raw_subject && c.public_key == candidate.public_key)
}

struct Builder<'a> {
    roots: &'a [Cert],
    intermediates: &'a [Cert],
    now: i64,
    signature_checks: usize,
}

impl<'a> Builder<'a> {
    /// Go's `buildChains`: every chain from `chain` (leaf first) to a root; the first
    /// rejection of a candidate issuer is the hint of the unknown-authority error.
    fn build(&mut self, chain: Vec<&'a Cert>) -> Result<Vec<Vec<&'a Cert>>, String> {
        let mut chains = Vec::new();
        let mut hint: Option<(String, String)> = None;
        let Some(&child) = chain.last() else {
            return Ok(chains);
        };
        let candidates = self
            .roots
            .iter()
            .map(|c| (Role::Root, c))
            .chain(self.intermediates.iter().map(|c| (Role::Intermediate, c)));
        for (role, candidate) in candidates {
            if candidate.raw_subject != child.raw_issuer {
                continue;
            }
            self.signature_checks += 1;
            if self.signature_checks > MAX_SIGNATURE_CHECKS {
                return Err("x509: signature check attempts limit reached while verifying certificate chain".into());
            }
            if already_in_chain(candidate, &chain) {
                continue;
            }
            let checked = check_signature_from(child, candidate)
                .and_then(|()| is_valid(candidate, role, &chain, self.now));
            if let Err(e) = checked {
                hint.get_or_insert((e, candidate.display_name.clone()));
                continue;
            }
            let mut longer = chain.clone();
            longer.push(candidate);
            match role {
                Role::Root => chains.push(longer),
                _ => match self.build(longer) {
                    Ok(found) => chains.extend(found),
                    Err(e) => {
                        hint.get_or_insert((e, candidate.display_name.clone()));
                    }
                },
            }
        }
        if chains.is_empty() {
            let mut message = "x509: certificate signed by unknown authority".to_string();
            if let Some((err, name)) = hint {
                message.push_str(&format!(
                    " (possibly because of {err:?} while trying to verify candidate authority certificate {name:?})"
                ));
            }
            return Err(message);
        }
        Ok(chains)
    }
}

/// Go's `checkChainForKeyUsage` for server authentication: walking from the root down,
/// every certificate that names extended key usages must include serverAuth (or any).
fn allows_server_auth(chain: &[&Cert]) -> bool {
    chain.iter().all(|c| match c.ext_key_usage {
        None => true,
        Some((any, server_auth)) => any || server_auth,
    })
}

/// A DNS name under a DNS name constraint (Go's `matchDomainConstraint`, simplified).
fn dns_within(name: &str, constraint: &str) -> bool {
    let name = name.to_ascii_lowercase();
    let constraint = constraint.to_ascii_lowercase();
    if constraint.is_empty() {
        return true;
    }
    if let Some(suffix) = constraint.strip_prefix('.') {
        return name.ends_with(&format!(".{suffix}"));
    }
    name == constraint || name.ends_with(&format!(".{constraint}"))
}

fn ip_within(ip: &IpAddr, (addr, mask): &(Vec<u8>, Vec<u8>)) -> bool {
    let bytes = match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    };
    bytes.len() == addr.len()
        && bytes
            .iter()
            .zip(addr.iter().zip(mask))
            .all(|(b, (a, m))| b & m == a & m)
}

fn within(subtrees: &NameSubtrees, dns: Option<&str>, ip: Option<&IpAddr>) -> bool {
    dns.is_some_and(|d| subtrees.dns.iter().any(|c| dns_within(d, c)))
        || ip.is_some_and(|i| subtrees.ip.iter().any(|c| ip_within(i, c)))
}

/// Go's `checkChainConstraints` for DNS and IP names: each CA above the leaf with name
/// constraints must permit (and not exclude) every name the leaf claims.
fn check_name_constraints(chain: &[&Cert]) -> Result<(), String> {
    let Some((leaf, issuers)) = chain.split_first() else {
        return Ok(());
    };
    for ca in issuers {
        let Some(nc) = &ca.name_constraints else {
            continue;
        };
        for name in &leaf.dns_names {
            let excluded = within(&nc.excluded, Some(name), None);
            let permitted = nc.permitted.dns.is_empty() || within(&nc.permitted, Some(name), None);
            if excluded || !permitted {
                return Err(format!(
                    "x509: a root or intermediate certificate is not authorized to sign for this name: DNS name {name:?} is not permitted by any constraint"
                ));
            }
        }
        for ip in &leaf.ip_addresses {
            let excluded = within(&nc.excluded, None, Some(ip));
            let permitted = nc.permitted.ip.is_empty() || within(&nc.permitted, None, Some(ip));
            if excluded || !permitted {
                return Err(format!(
                    "x509: a root or intermediate certificate is not authorized to sign for this name: IP address {ip:?} is not permitted by any constraint"
                ));
            }
        }
    }
    Ok(())
}

/// Verifies a server certificate (`leaf`, with the `intermediates` the server presented)
/// for `host` against `roots` at `now` (Unix seconds); the error is Go's message.
pub(crate) fn verify(
    leaf: &Cert,
    intermediates: &[Cert],
    roots: &[Cert],
    host: &str,
    now: i64,
) -> Result<(), String> {
    is_valid(leaf, Role::Leaf, &[], now)?;
    hostname::verify(leaf, host)?;
    let chains = if roots.iter().any(|r| r.der == leaf.der) {
        vec![vec![leaf]]
    } else {
        Builder {
            roots,
            intermediates,
            now,
            signature_checks: 0,
        }
        .build(vec![leaf])?
    };
    let mut usage_refused = 0;
    let mut constraint_error = None;
    for chain in &chains {
        if !allows_server_auth(chain) {
            usage_refused += 1;
            continue;
        }
        match check_name_constraints(chain) {
            Ok(()) => return Ok(()),
            Err(e) => {
                constraint_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = constraint_error {
        return Err(e);
    }
    if usage_refused > 0 {
        return Err("x509: certificate specifies an incompatible key usage".into());
    }
    Err("x509: certificate signed by unknown authority".into())
}
