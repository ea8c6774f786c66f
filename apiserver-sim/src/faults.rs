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
        }
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

    /// Consumes one matching rule use: Some((code, retry_after)) if the request must fail.
    pub fn take(&mut self, verb: &str, resource: &str) -> Option<(u16, Option<u64>)> {
        let i = self.rules.iter().position(|r| {
            (r.verb == "*" || r.verb.eq_ignore_ascii_case(verb))
                && (r.resource == "*" || r.resource == resource)
        })?;
        let rule = &mut self.rules[i];
        rule.count -= 1;
        let retry = rule.retry_after_seconds.or((rule.code == 429).then_some(1));
        let out = (rule.code, retry);
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
        assert_eq!(f.take("get", "pods"), None);
        assert_eq!(f.take("list", "pods"), Some((429, Some(1))));
        assert_eq!(f.take("list", "pods"), Some((429, Some(1))));
        assert_eq!(f.take("list", "pods"), None);
        f.add(FailRule::new("*", "*", 500, 1));
        assert_eq!(f.take("create", "configmaps"), Some((500, None)));
    }
}
