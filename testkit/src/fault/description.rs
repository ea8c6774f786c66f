//! [`Fault`]: which requests fail and how — the simulator's [`FailRule`] (verb, resource,
//! namespace, count or probability and seed), with an [`Effect`] that may also be one only a
//! proxy on the wire can produce (a stream cut mid-event, a closed connection, a delayed,
//! stalled or truncated answer).

use std::time::Duration;

use apiserver_sim::FailRule;

/// What happens to a request a [`Fault`] selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Effect {
    /// The request is answered with this status instead of reaching the server: a `Status`
    /// document with the code (`Retry-After` set from `retry_after_seconds`, 1 s for a 429
    /// without one); with `in_band`, a watch is answered HTTP 200 and one `ERROR` event, as a
    /// real server reports failures once a watch is accepted (e.g. 410 Expired). What a
    /// [`FailRule`] asks for.
    Status {
        /// HTTP status code (410, 429, 500, 503, ...).
        code: u16,
        /// `Retry-After` seconds.
        retry_after_seconds: Option<u64>,
        /// For watches: HTTP 200 and one `ERROR` event carrying the status.
        in_band: bool,
    },
    /// The request reaches the server; its answer is cut off abruptly (no end of the chunked
    /// body: the client sees a broken stream). A watch is cut after `after_events` whole
    /// events (every event counts, bookmarks and initial events too), and with `mid_event`
    /// after the first half of the next event's bytes as well. Any other answer is cut in the
    /// middle of its body.
    CutStream {
        /// Whole events that get through first.
        after_events: u32,
        /// Also send the first half of the next event.
        mid_event: bool,
    },
    /// The client's connection is closed without an answer; the request never reaches the
    /// server.
    CloseConnection,
    /// The request reaches the server at once; its answer is held back this long.
    Delay(Duration),
    /// The answer's headers and the first half of its first chunk go out, then nothing for
    /// this long, then the rest (a list page, or a watch, stalled mid-body).
    Stall(Duration),
    /// The answer ends cleanly (a complete HTTP message) after this many bytes of its body:
    /// a list or object cut short, which the client fails to decode.
    Truncate {
        /// Bytes of the body that get through.
        keep_bytes: usize,
    },
}

impl Effect {
    /// The effect's name, for errors.
    pub fn name(&self) -> &'static str {
        match self {
            Effect::Status { .. } => "status",
            Effect::CutStream { .. } => "cut stream",
            Effect::CloseConnection => "closed connection",
            Effect::Delay(_) => "delayed answer",
            Effect::Stall(_) => "stalled answer",
            Effect::Truncate { .. } => "truncated body",
        }
    }
}

/// A fault: the requests it selects, as a [`FailRule`] selects them, and its [`Effect`].
///
/// A counted fault ([`Fault::next`]) applies to the next `count` selected requests and is then
/// used up; a random one ([`Fault::random`]) applies to each selected request with
/// `probability`, drawn from a sequence seeded by `seed` (the simulator's draws: the same seed
/// and the same requests fail the same way on either server), until the faults are cleared.
/// Faults are tried in the order they were added: a counted fault always applies, a random one
/// that does not fire lets the next one try.
///
/// Every [`FailRule`] converts into the fault with the same selection and
/// [`Effect::Status`].
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection, or
    /// `*`.
    pub verb: String,
    /// Plural resource name (`pods`, `configmaps`), or `*`. A subresource request (`pods/x/status`)
    /// is selected by its resource's plural.
    pub resource: String,
    /// Only requests addressed to this namespace (absent: any namespace, and cluster-wide
    /// requests).
    pub namespace: Option<String>,
    /// How many selected requests it applies to (ignored by random faults).
    pub count: u32,
    /// Random fault: the probability in `[0, 1]` that a selected request is affected.
    pub probability: Option<f64>,
    /// Seed of a random fault's draws.
    pub seed: Option<u64>,
    /// What happens to an affected request.
    pub effect: Effect,
}

impl Fault {
    /// The next `count` `verb` requests on `resource` get `effect`.
    pub fn next(verb: &str, resource: &str, count: u32, effect: Effect) -> Self {
        Self {
            verb: verb.into(),
            resource: resource.into(),
            namespace: None,
            count,
            probability: None,
            seed: None,
            effect,
        }
    }

    /// Each `verb` request on `resource` gets `effect` with `probability` (in `[0, 1]`), from a
    /// sequence of draws seeded by `seed`, until the faults are cleared.
    pub fn random(verb: &str, resource: &str, probability: f64, seed: u64, effect: Effect) -> Self {
        Self {
            probability: Some(probability),
            seed: Some(seed),
            ..Self::next(verb, resource, 0, effect)
        }
    }

    /// Only requests addressed to `namespace` are selected.
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// Checks the fault as the simulator checks a rule: a random fault's probability must
    /// lie in `[0, 1]`.
    pub fn validate(&self) -> Result<(), String> {
        let mut rule = FailRule::new(&self.verb, &self.resource, 0, self.count);
        rule.probability = self.probability;
        rule.validate()
    }

    /// Whether the fault selects a `verb` request on `resource` addressed to `namespace`.
    pub fn selects(&self, verb: &str, resource: &str, namespace: Option<&str>) -> bool {
        (self.verb == "*" || self.verb.eq_ignore_ascii_case(verb))
            && (self.resource == "*" || self.resource == resource)
            && self
                .namespace
                .as_deref()
                .is_none_or(|wanted| namespace == Some(wanted))
    }

    /// The [`FailRule`] of a fault whose effect is a [`Effect::Status`] (what the simulator
    /// can inject itself), `None` for the other effects.
    pub fn to_fail_rule(&self) -> Option<FailRule> {
        let Effect::Status {
            code,
            retry_after_seconds,
            in_band,
        } = self.effect
        else {
            return None;
        };
        let mut rule = FailRule::new(&self.verb, &self.resource, code, self.count);
        rule.namespace.clone_from(&self.namespace);
        rule.retry_after_seconds = retry_after_seconds;
        rule.in_band = in_band;
        rule.probability = self.probability;
        rule.seed = self.seed;
        Some(rule)
    }
}

impl From<FailRule> for Fault {
    fn from(rule: FailRule) -> Self {
        Self {
            effect: Effect::Status {
                code: rule.code,
                retry_after_seconds: rule.retry_after_seconds,
                in_band: rule.in_band,
            },
            verb: rule.verb,
            resource: rule.resource,
            namespace: rule.namespace,
            count: rule.count,
            probability: rule.probability,
            seed: rule.seed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fail_rule_converts_both_ways_unchanged() {
        for rule in [
            FailRule::new("watch", "configmaps", 410, 2).in_band(),
            FailRule::new("list", "pods", 429, 1)
                .retry_after(7)
                .in_namespace("a"),
            FailRule::random("*", "*", 503, 0.25, 9),
        ] {
            let fault = Fault::from(rule.clone());
            assert_eq!(fault.to_fail_rule(), Some(rule));
        }
        let cut = Fault::next(
            "watch",
            "configmaps",
            1,
            Effect::CutStream {
                after_events: 2,
                mid_event: true,
            },
        );
        assert_eq!(cut.to_fail_rule(), None);
    }

    #[test]
    fn selection_follows_the_simulator_rules() {
        let fault = Fault::from(FailRule::new("LIST", "pods", 500, 1).in_namespace("c"));
        assert!(fault.selects("list", "pods", Some("c")));
        assert!(!fault.selects("list", "pods", None));
        assert!(!fault.selects("list", "pods", Some("d")));
        assert!(!fault.selects("watch", "pods", Some("c")));
        let any = Fault::from(FailRule::new("*", "*", 500, 1));
        assert!(any.selects("deletecollection", "secrets", None));
        assert!(
            Fault::random("get", "pods", 1.5, 1, Effect::CloseConnection)
                .validate()
                .is_err()
        );
        assert!(
            Fault::random("get", "pods", f64::NAN, 1, Effect::CloseConnection)
                .validate()
                .is_err()
        );
    }
}
