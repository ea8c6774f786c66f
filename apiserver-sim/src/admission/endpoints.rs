//! Where webhook services live. The simulator has no cluster network, so a webhook's
//! `clientConfig.service` (namespace, name, port) is resolved through a table its user fills
//! ([`crate::ApiServerBuilder::service_endpoint`], the binary's `--service-endpoint`), and a
//! `clientConfig.url` is called as written. Either way the call is HTTPS, and the server
//! certificate is verified for the URL's host or for `<service>.<namespace>.svc`.

use std::sync::Arc;

use serde_json::Value;

/// One mapping: a service (and optionally one of its ports) to a base URL.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mapping {
    namespace: String,
    name: String,
    port: Option<u16>,
    base: String,
}

/// One `--service-endpoint` of the binary: a service (and optionally one port) and the base
/// URL it is reachable at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceEndpoint {
    /// The service's namespace.
    pub namespace: String,
    /// The service's name.
    pub name: String,
    /// The service port mapped, or every port.
    pub port: Option<u16>,
    /// `https://host:port[/prefix]`.
    pub url: String,
}

/// Parses `namespace/name[:port]=https://host:port` (the binary's `--service-endpoint`).
pub fn parse_service_endpoint(s: &str) -> Result<ServiceEndpoint, String> {
    let bad = || format!("expected namespace/name[:port]=https://host:port, got {s:?}");
    let (key, url) = s.split_once('=').ok_or_else(bad)?;
    let (namespace, name) = key.split_once('/').ok_or_else(bad)?;
    let (name, port) = match name.split_once(':') {
        Some((n, p)) => (n, Some(p.parse::<u16>().map_err(|_| bad())?)),
        None => (name, None),
    };
    if namespace.is_empty() || name.is_empty() || split_https(url).is_none() {
        return Err(bad());
    }
    Ok(ServiceEndpoint {
        namespace: namespace.into(),
        name: name.into(),
        port,
        url: url.into(),
    })
}

/// The table of service endpoints (cheap to clone).
#[derive(Debug, Clone, Default)]
pub struct ServiceEndpoints(Arc<Vec<Mapping>>);

/// Where and how one webhook call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The URL as a real server names it in errors (`https://svc.ns.svc:443/path`).
    pub display_url: String,
    /// Host to connect to.
    pub host: String,
    /// Port to connect to.
    pub port: u16,
    /// Name the server certificate must be valid for (SNI and verification).
    pub server_name: String,
    /// Path (and query) of the request.
    pub path: String,
    /// `caBundle`, base64 of PEM certificates (empty: no trusted roots).
    pub ca_bundle: String,
}

/// Splits `https://host[:port][/path]` into host, port and path (`None` if not https).
fn split_https(url: &str) -> Option<(String, u16, String)> {
    let rest = url.strip_prefix("https://")?;
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, tail) = v6.split_once(']')?;
        let port = match tail.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => 443,
        };
        (h.to_string(), port)
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p.parse().ok()?),
            None => (authority.to_string(), 443),
        }
    };
    if host.is_empty() {
        return None;
    }
    let path = if path.is_empty() || path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    Some((host, port, path))
}

impl ServiceEndpoints {
    /// Adds a mapping (later mappings of the same service and port win).
    pub fn insert(&mut self, namespace: &str, name: &str, port: Option<u16>, base_url: &str) {
        let list = Arc::make_mut(&mut self.0);
        list.retain(|m| !(m.namespace == namespace && m.name == name && m.port == port));
        list.push(Mapping {
            namespace: namespace.into(),
            name: name.into(),
            port,
            base: base_url.trim_end_matches('/').into(),
        });
    }

    fn base(&self, namespace: &str, name: &str, port: u16) -> Option<&str> {
        let hit = |p: Option<u16>| {
            self.0
                .iter()
                .rev()
                .find(|m| m.namespace == namespace && m.name == name && m.port == p)
        };
        hit(Some(port))
            .or_else(|| hit(None))
            .map(|m| m.base.as_str())
    }

    /// Resolves a webhook `clientConfig` into a call target, or says why it cannot be called
    /// (as the error text after `Post "<url>": `), with the URL a real server would name.
    pub fn resolve(&self, client_config: &Value) -> Result<Target, (String, String)> {
        let ca_bundle = crate::machinery::pointer::text(client_config, "/caBundle").to_string();
        if let Some(url) = client_config.get("url").and_then(Value::as_str) {
            let (host, port, path) = split_https(url)
                .ok_or_else(|| (url.to_string(), "unsupported protocol scheme".to_string()))?;
            return Ok(Target {
                display_url: url.to_string(),
                server_name: host.clone(),
                host,
                port,
                path,
                ca_bundle,
            });
        }
        let svc = client_config.get("service").unwrap_or(&Value::Null);
        let field = |k: &str| svc.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let (ns, name) = (field("namespace"), field("name"));
        let port = svc
            .get("port")
            .and_then(Value::as_u64)
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(443);
        let mut path = field("path");
        if !path.starts_with('/') {
            path.insert(0, '/');
        }
        let server_name = format!("{name}.{ns}.svc");
        let display_url = format!("https://{server_name}:{port}{path}");
        let base = self
            .base(&ns, &name, port)
            .ok_or_else(|| (display_url.clone(), format!("service \"{name}\" not found")))?;
        let (host, base_port, base_path) = split_https(base).ok_or_else(|| {
            (
                display_url.clone(),
                "unsupported protocol scheme".to_string(),
            )
        })?;
        let prefix = base_path.trim_end_matches('/');
        Ok(Target {
            display_url,
            host,
            port: base_port,
            server_name,
            path: format!("{prefix}{path}"),
            ca_bundle,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resolves_urls_and_mapped_services() {
        let mut eps = ServiceEndpoints::default();
        eps.insert("ns", "hook", None, "https://127.0.0.1:9443/");
        let t = eps
            .resolve(&json!({"service": {"namespace": "ns", "name": "hook", "path": "/v"}}))
            .expect("mapped");
        assert_eq!(
            (
                t.host.as_str(),
                t.port,
                t.path.as_str(),
                t.server_name.as_str()
            ),
            ("127.0.0.1", 9443, "/v", "hook.ns.svc")
        );
        assert_eq!(t.display_url, "https://hook.ns.svc:443/v");
        let err = eps
            .resolve(&json!({"service": {"namespace": "ns", "name": "other"}}))
            .expect_err("unmapped");
        assert_eq!(err.1, "service \"other\" not found");
        let t = eps
            .resolve(&json!({"url": "https://localhost:8443/x?y=1"}))
            .expect("url");
        assert_eq!((t.port, t.path.as_str()), (8443, "/x?y=1"));
        let ep = parse_service_endpoint("a/b:443=https://127.0.0.1:1").expect("parses");
        assert_eq!(
            (ep.namespace.as_str(), ep.name.as_str(), ep.port),
            ("a", "b", Some(443))
        );
        assert!(parse_service_endpoint("a=b").is_err());
        assert!(parse_service_endpoint("a/b=http://x:1").is_err());
    }
}
