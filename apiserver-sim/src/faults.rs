//! Fault injection: "fail the next N requests matching verb and resource".
//!
//! The other faults (drop every watch, compact history) act directly on the shared
//! state; see [`crate::ApiServer::drop_watches`] and [`crate::ApiServer::compact`].

use serde::{Deserialize, Serialize};

/// A rule failing the next `count` requests that match `verb` and `resource`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailRule {
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection, or `*`.
    pub verb: String,
    /// Plural resource name (e.g. `pods`, `deployments`), or `*`.
    pub resource: String,
    /// HTTP status to answer with (500, 429, 403, ...).
    pub code: u16,
    /// How many matching requests fail.
    pub count: u32,
    /// `Retry-After` seconds (defaults to 1 for 429).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// For watches: answer HTTP 200 and send the error as one ERROR event, then end the
    /// stream (how a real server reports failures once a watch is accepted, e.g. 410).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_band: bool,
}

/// What a matching rule asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected {
    /// Status code.
    pub code: u16,
    /// `Retry-After` seconds.
    pub retry_after: Option<u64>,
    /// Deliver as an in-band watch ERROR event.
    pub in_band: bool,
}

impl FailRule {
    /// A rule failing the next `count` `verb` requests on `resource` with `code`.
    pub fn new(verb: &str, resource: &str, code: u16, count: u32) -> Self {
        Self {
            verb: verb.into(),
            resource: resource.into(),
            code,
            count,
            retry_after_seconds: None,
            in_band: false,
        }
    }

    /// For watch rules: fail with HTTP 200 + one ERROR event instead of an HTTP error.
    pub fn in_band(mut self) -> Self {
        self.in_band = true;
        self
    }

    /// Sets `Retry-After`.
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.retry_after_seconds = Some(seconds);
        self
    }
}

/// The active fault rules.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Vec<FailRule>,
}

impl Faults {
    /// Adds a rule.
    pub fn add(&mut self, rule: FailRule) {
        if rule.count > 0 {
            self.rules.push(rule);
        }
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The active rules.
    pub fn rules(&self) -> &[FailRule] {
        &self.rules
    }

    /// Consumes one matching rule use: Some(..) if the request must fail.
    pub fn take(&mut self, verb: &str, resource: &str) -> Option<Injected> {
        let i = self.rules.iter().position(|r| {
            (r.verb == "*" || r.verb.eq_ignore_ascii_case(verb))
                && (r.resource == "*" || r.resource == resource)
        })?;
        let rule = &mut self.rules[i];
        rule.count -= 1;
        let retry = rule.retry_after_seconds.or((rule.code == 429).then_some(1));
        let out = Injected {
            code: rule.code,
            retry_after: retry,
            in_band: rule.in_band,
        };
        if rule.count == 0 {
            self.rules.remove(i);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_consumed() {
        let mut f = Faults::default();
        f.add(FailRule::new("list", "pods", 429, 2));
        let hit = |code, retry_after| {
            Some(Injected {
                code,
                retry_after,
                in_band: false,
            })
        };
        assert_eq!(f.take("get", "pods"), None);
        assert_eq!(f.take("list", "pods"), hit(429, Some(1)));
        assert_eq!(f.take("list", "pods"), hit(429, Some(1)));
        assert_eq!(f.take("list", "pods"), None);
        f.add(FailRule::new("*", "*", 500, 1));
        assert_eq!(f.take("create", "configmaps"), hit(500, None));
    }
}
