//! Go's `Certificate.VerifyHostname`: IP addresses against IP subjectAltNames only, DNS names
//! against DNS subjectAltNames (case-insensitive, a wildcard only as the whole leftmost
//! label, a trailing dot ignored), never the Common Name; and `HostnameError`'s texts.

use std::net::IpAddr;

use super::cert::Cert;

fn valid_hostname(host: &str, is_pattern: bool) -> bool {
    let host = if is_pattern {
        host
    } else {
        host.strip_suffix('.').unwrap_or(host)
    };
    if host.is_empty() || host == "*" {
        return false;
    }
    host.split('.').enumerate().all(|(i, part)| {
        if part.is_empty() {
            return false;
        }
        if is_pattern && i == 0 && part == "*" {
            return true;
        }
        part.chars()
            .enumerate()
            .all(|(j, c)| c.is_ascii_alphanumeric() || (c == '-' && j != 0) || c == '_')
    })
}

fn match_hostnames(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if pattern.is_empty() || host.is_empty() {
        return false;
    }
    let pattern_parts: Vec<&str> = pattern.split('.').collect();
    let host_parts: Vec<&str> = host.split('.').collect();
    pattern_parts.len() == host_parts.len()
        && pattern_parts
            .iter()
            .zip(&host_parts)
            .enumerate()
            .all(|(i, (p, h))| (i == 0 && *p == "*") || p == h)
}

fn match_exactly(pattern: &str, host: &str) -> bool {
    !(host.is_empty() || host == "." || pattern.is_empty() || pattern == ".")
        && pattern.eq_ignore_ascii_case(host)
}

fn candidate_ip(host: &str) -> Option<IpAddr> {
    let inner = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    inner.parse().ok()
}

/// Whether `cert` is valid for `host`; the error is Go's `HostnameError` text.
pub(crate) fn verify(cert: &Cert, host: &str) -> Result<(), String> {
    if let Some(ip) = candidate_ip(host) {
        if cert.ip_addresses.contains(&ip) {
            return Ok(());
        }
        return Err(error(cert, &ip.to_string(), true));
    }
    let candidate = host.to_ascii_lowercase();
    let valid_candidate = valid_hostname(&candidate, false);
    let matched = cert.dns_names.iter().any(|pattern| {
        if valid_candidate && valid_hostname(pattern, true) {
            match_hostnames(pattern, &candidate)
        } else {
            match_exactly(pattern, &candidate)
        }
    });
    if matched {
        Ok(())
    } else {
        Err(error(cert, host, false))
    }
}

/// Go's `HostnameError.Error()`.
fn error(cert: &Cert, host: &str, is_ip: bool) -> String {
    const MAX_NAMES: usize = 100;
    if !cert.has_san && match_hostnames(&cert.common_name, host) {
        return "x509: certificate relies on legacy Common Name field, use SANs instead".into();
    }
    let valid = if is_ip {
        if cert.ip_addresses.is_empty() {
            return format!(
                "x509: cannot validate certificate for {host} because it doesn't contain any IP SANs"
            );
        }
        if cert.ip_addresses.len() >= MAX_NAMES {
            return format!(
                "x509: certificate is valid for {} IP SANs, but none matched {host}",
                cert.ip_addresses.len()
            );
        }
        let ips: Vec<String> = cert.ip_addresses.iter().map(IpAddr::to_string).collect();
        ips.join(", ")
    } else {
        if cert.dns_names.len() >= MAX_NAMES {
            return format!(
                "x509: certificate is valid for {} names, but none matched {host}",
                cert.dns_names.len()
            );
        }
        cert.dns_names.join(", ")
    };
    if valid.is_empty() {
        format!("x509: certificate is not valid for any names, but wanted to match {host}")
    } else {
        format!("x509: certificate is valid for {valid}, not {host}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_cover_one_leftmost_label() {
        assert!(match_hostnames("*.example.com", "a.example.com"));
        assert!(match_hostnames("*.Example.com", "A.example.com."));
        assert!(!match_hostnames("*.example.com", "a.b.example.com"));
        assert!(!match_hostnames("*.example.com", "example.com"));
        assert!(!valid_hostname("a.*.com", true));
        assert!(!valid_hostname("*", true));
        assert!(valid_hostname("svc.ns.svc.", false));
    }
}
