//! Fault injection: "fail the next N requests matching verb and resource", and random
//! failures with a given probability from a seeded sequence (chaos tests).
//!
//! The server-wide faults (drop every watch, compact history, restart) are
//! [`super::server_faults::ServerFaults`], which the shared state implements; see
//! [`crate::ApiServer::drop_watches`] and [`crate::ApiServer::compact`].

use serde::{Deserialize, Serialize};

/// A failure rule: requests matching `verb` and `resource` fail with `code`.
///
/// Two kinds: [`FailRule::new`] fails the next `count` matching requests and is then used
/// up; [`FailRule::random`] fails each matching request with `probability`, drawn from a
/// deterministic sequence seeded by `seed`, until [`crate::ApiServer::clear_faults`].
/// [`FailRule::in_band`] and [`FailRule::retry_after`] apply to both.
///
/// When several rules match a request, they are tried in the order they were added: a
/// counted rule always fires, a random one that does not fire lets the next one try.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FailRule {
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection, or `*`.
    pub verb: String,
    /// Plural resource name (e.g. `pods`, `deployments`), or `*` for every resource.
    pub resource: String,
    /// Only requests in this namespace (absent: any namespace, and cluster-wide requests).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// HTTP status to answer with (500, 429, 403, ...).
    pub code: u16,
    /// How many matching requests fail (ignored by random rules).
    #[serde(default)]
    pub count: u32,
    /// `Retry-After` seconds (defaults to 1 for 429).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// For watches: answer HTTP 200 and send the error as one ERROR event, then end the
    /// stream (how a real server reports failures once a watch is accepted, e.g. 410).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_band: bool,
    /// Random rule: the probability in `[0, 1]` that a matching request fails. The rule
    /// stays until the faults are cleared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// Seed of a random rule's sequence (same seed, same requests: same failures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

// `probability` is validated to lie in [0, 1] before a rule is used, so never NaN.
impl Eq for FailRule {}

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
            namespace: None,
            code,
            count,
            retry_after_seconds: None,
            in_band: false,
            probability: None,
            seed: None,
        }
    }

    /// A rule failing each `verb` request on `resource` with `code` with the given
    /// `probability` (in `[0, 1]`), indefinitely until [`crate::ApiServer::clear_faults`].
    /// The sequence of draws is deterministic for a `seed`: the same requests in the same
    /// order fail the same way on every run.
    ///
    /// A probability outside `[0, 1]` (or NaN) is refused when the rule is installed:
    /// [`crate::ApiServer::try_fail_next`] returns an error, `POST /__sim/faults` answers
    /// 400, and [`crate::ApiServer::fail_next`] logs the error and installs nothing.
    pub fn random(verb: &str, resource: &str, code: u16, probability: f64, seed: u64) -> Self {
        Self {
            probability: Some(probability),
            seed: Some(seed),
            ..Self::new(verb, resource, code, 0)
        }
    }

    /// Only requests addressed to `namespace` match (e.g. the list of one namespace's pods,
    /// not the list across all namespaces).
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.into());
        self
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

    /// Checks the rule: a random rule's probability must lie in `[0, 1]`.
    pub fn validate(&self) -> Result<(), String> {
        match self.probability {
            Some(p) if !(0.0..=1.0).contains(&p) => Err(format!(
                "fault rule probability must be within [0, 1], got {p}"
            )),
            _ => Ok(()),
        }
    }

    fn matches(&self, verb: &str, resource: &str, namespace: Option<&str>) -> bool {
        (self.verb == "*" || self.verb.eq_ignore_ascii_case(verb))
            && (self.resource == "*" || self.resource == resource)
            && self
                .namespace
                .as_deref()
                .is_none_or(|wanted| namespace == Some(wanted))
    }

    fn injected(&self) -> Injected {
        Injected {
            code: self.code,
            retry_after: self.retry_after_seconds.or((self.code == 429).then_some(1)),
            in_band: self.in_band,
        }
    }
}

/// SplitMix64: a tiny, well-mixed deterministic generator.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A rule with its random state.
#[derive(Debug)]
struct Active {
    rule: FailRule,
    rng: u64,
}

impl Active {
    /// Whether this rule fails the request (consumes one draw or one use).
    fn fires(&mut self) -> bool {
        match self.rule.probability {
            Some(p) => {
                // 53 random bits → uniform in [0, 1).
                let x = (splitmix64(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64;
                x < p
            }
            None => true,
        }
    }
}

/// The active fault rules.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Vec<Active>,
}

impl Faults {
    /// Adds a rule (a counted rule with count 0 is a no-op). Errors on an invalid rule.
    pub fn add(&mut self, rule: FailRule) -> Result<(), String> {
        rule.validate()?;
        if rule.probability.is_some() || rule.count > 0 {
            let rng = rule.seed.unwrap_or(0);
            self.rules.push(Active { rule, rng });
        }
        Ok(())
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The active rules (counted rules show their remaining count).
    pub fn rules(&self) -> Vec<FailRule> {
        self.rules.iter().map(|a| a.rule.clone()).collect()
    }

    /// Consumes one matching rule use for a request outside any namespace: Some(..) if the
    /// request must fail.
    #[cfg(test)]
    pub fn take(&mut self, verb: &str, resource: &str) -> Option<Injected> {
        self.take_in(verb, resource, None)
    }

    /// Consumes one matching rule use for a request addressed to `namespace` (`None`:
    /// cluster-wide or across all namespaces): Some(..) if the request must fail.
    pub fn take_in(
        &mut self,
        verb: &str,
        resource: &str,
        namespace: Option<&str>,
    ) -> Option<Injected> {
        if self.rules.is_empty() {
            return None;
        }
        let i = self
            .rules
            .iter_mut()
            .position(|a| a.rule.matches(verb, resource, namespace) && a.fires())?;
        let rule = &mut self.rules[i].rule;
        let out = rule.injected();
        if rule.probability.is_none() {
            rule.count -= 1;
            if rule.count == 0 {
                self.rules.remove(i);
            }
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(code: u16, retry_after: Option<u64>) -> Option<Injected> {
        Some(Injected {
            code,
            retry_after,
            in_band: false,
        })
    }

    #[test]
    fn rules_are_consumed() {
        let mut f = Faults::default();
        f.add(FailRule::new("list", "pods", 429, 2)).unwrap();
        assert_eq!(f.take("get", "pods"), None);
        assert_eq!(f.take("list", "pods"), hit(429, Some(1)));
        assert_eq!(f.take("list", "pods"), hit(429, Some(1)));
        assert_eq!(f.take("list", "pods"), None);
        f.add(FailRule::new("*", "*", 500, 1)).unwrap();
        assert_eq!(f.take("create", "configmaps"), hit(500, None));
    }

    #[test]
    fn a_namespaced_rule_matches_only_its_namespace() {
        let mut f = Faults::default();
        f.add(FailRule::new("list", "pods", 403, 2).in_namespace("c"))
            .unwrap();
        assert_eq!(f.take("list", "pods"), None);
        assert_eq!(f.take_in("list", "pods", Some("a")), None);
        assert_eq!(f.take_in("list", "pods", Some("c")), hit(403, None));
        assert_eq!(f.take_in("list", "pods", Some("c")), hit(403, None));
        assert_eq!(f.take_in("list", "pods", Some("c")), None);
    }

    fn draws(rule: FailRule, n: usize) -> Vec<bool> {
        let mut f = Faults::default();
        f.add(rule).unwrap();
        (0..n).map(|_| f.take("list", "pods").is_some()).collect()
    }

    #[test]
    fn random_rules_are_deterministic_and_near_their_probability() {
        let a = draws(FailRule::random("list", "pods", 500, 0.3, 7), 10_000);
        assert_eq!(
            a,
            draws(FailRule::random("list", "pods", 500, 0.3, 7), 10_000)
        );
        assert_ne!(
            a,
            draws(FailRule::random("list", "pods", 500, 0.3, 8), 10_000)
        );
        let hits = a.iter().filter(|b| **b).count();
        assert!((2_700..3_300).contains(&hits), "{hits}");
        assert!(
            draws(FailRule::random("list", "pods", 500, 0.0, 1), 1000)
                .iter()
                .all(|b| !b)
        );
        assert!(
            draws(FailRule::random("list", "pods", 500, 1.0, 1), 1000)
                .iter()
                .all(|b| *b)
        );
    }

    #[test]
    fn random_rules_validate_and_compose() {
        let mut f = Faults::default();
        for p in [-0.1, 1.5, f64::NAN, f64::INFINITY] {
            assert!(f.add(FailRule::random("*", "*", 500, p, 1)).is_err(), "{p}");
        }
        assert!(f.rules().is_empty());
        f.add(
            FailRule::random("*", "*", 429, 1.0, 1)
                .retry_after(3)
                .in_band(),
        )
        .unwrap();
        assert_eq!(
            f.take("watch", "anything"),
            Some(Injected {
                code: 429,
                retry_after: Some(3),
                in_band: true
            })
        );
        // A random rule that does not fire lets a later counted rule fire.
        let mut f = Faults::default();
        f.add(FailRule::random("get", "pods", 500, 0.0, 1)).unwrap();
        f.add(FailRule::new("get", "pods", 403, 1)).unwrap();
        assert_eq!(f.take("get", "pods"), hit(403, None));
        assert_eq!(f.take("get", "pods"), None);
        assert_eq!(f.rules().len(), 1);
    }
}
