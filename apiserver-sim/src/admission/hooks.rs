//! The webhooks of the stored `ValidatingWebhookConfiguration`s and
//! `MutatingWebhookConfiguration`s, parsed and in call order (configurations sorted by name,
//! webhooks in their configuration's order), cached until a configuration changes.

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;

use crate::kinds::webhook_configuration::GROUP;
use crate::machinery::pointer::owned_strings;
use crate::machinery::resource_info::GroupResourceRef;
use crate::store::State;

const VALIDATING: &str = "validatingwebhookconfigurations";
const MUTATING: &str = "mutatingwebhookconfigurations";

/// One rule of a webhook (`rules[]`).
#[derive(Debug, Clone, Default)]
pub struct Rule {
    /// `operations` (`CREATE`, `UPDATE`, `DELETE`, `CONNECT`, `*`).
    pub operations: Vec<String>,
    /// `apiGroups`.
    pub groups: Vec<String>,
    /// `apiVersions`.
    pub versions: Vec<String>,
    /// `resources` (`pods`, `pods/status`, `pods/*`, `*`, `*/*`).
    pub resources: Vec<String>,
    /// `scope` (`*`, `Cluster`, `Namespaced`).
    pub scope: String,
}

/// One webhook, with the v1 defaults applied.
#[derive(Debug, Clone)]
pub struct Webhook {
    /// `name`.
    pub name: String,
    /// The configuration it belongs to.
    pub configuration: String,
    /// Identity across reinvocation rounds: configuration and index.
    pub uid: (String, usize),
    /// `clientConfig`.
    pub client_config: Value,
    /// `rules`.
    pub rules: Vec<Rule>,
    /// `failurePolicy: Ignore`.
    pub fail_open: bool,
    /// `matchPolicy: Equivalent` (the default).
    pub equivalent: bool,
    /// `namespaceSelector`.
    pub namespace_selector: Value,
    /// `objectSelector`.
    pub object_selector: Value,
    /// `sideEffects` (empty when missing).
    pub side_effects: String,
    /// `timeoutSeconds` (default 10).
    pub timeout: Duration,
    /// `reinvocationPolicy: IfNeeded` (mutating webhooks).
    pub reinvoke_if_needed: bool,
    /// `admissionReviewVersions`.
    pub review_versions: Vec<String>,
}

fn parse(configuration: &str, index: usize, hook: &Value) -> Webhook {
    let text = |k: &str| hook.get(k).and_then(Value::as_str).unwrap_or("");
    let rules = hook
        .get("rules")
        .and_then(Value::as_array)
        .map(|rules| {
            rules
                .iter()
                .map(|r| Rule {
                    operations: owned_strings(r, "/operations"),
                    groups: owned_strings(r, "/apiGroups"),
                    versions: owned_strings(r, "/apiVersions"),
                    resources: owned_strings(r, "/resources"),
                    scope: r
                        .get("scope")
                        .and_then(Value::as_str)
                        .unwrap_or("*")
                        .to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    Webhook {
        name: text("name").to_string(),
        configuration: configuration.to_string(),
        uid: (configuration.to_string(), index),
        client_config: hook.get("clientConfig").cloned().unwrap_or(Value::Null),
        rules,
        fail_open: text("failurePolicy") == "Ignore",
        equivalent: text("matchPolicy") != "Exact",
        namespace_selector: hook
            .get("namespaceSelector")
            .cloned()
            .unwrap_or(Value::Null),
        object_selector: hook.get("objectSelector").cloned().unwrap_or(Value::Null),
        side_effects: text("sideEffects").to_string(),
        timeout: Duration::from_secs(
            hook.get("timeoutSeconds")
                .and_then(Value::as_u64)
                .unwrap_or(10),
        ),
        reinvoke_if_needed: text("reinvocationPolicy") == "IfNeeded",
        review_versions: owned_strings(hook, "/admissionReviewVersions"),
    }
}

/// Every webhook, in call order.
#[derive(Debug, Default)]
pub struct Hooks {
    /// Mutating webhooks.
    pub mutating: Vec<Webhook>,
    /// Validating webhooks.
    pub validating: Vec<Webhook>,
}

impl Hooks {
    /// No webhook at all.
    pub fn is_empty(&self) -> bool {
        self.mutating.is_empty() && self.validating.is_empty()
    }
}

fn configurations(st: &State, plural: &'static str) -> Vec<Arc<Value>> {
    let key = GroupResourceRef::new(GROUP, plural);
    st.resource(&key)
        .map(|rs| rs.objects.values().map(|s| s.obj.clone()).collect())
        .unwrap_or_default()
}

fn webhooks(configs: &[Arc<Value>]) -> Vec<Webhook> {
    // Objects are kept in name order already; sort anyway, it is the documented order.
    let mut configs: Vec<&Arc<Value>> = configs.iter().collect();
    configs.sort_by(|a, b| crate::machinery::meta::name(a).cmp(crate::machinery::meta::name(b)));
    let mut out = Vec::new();
    for cfg in configs {
        let name = crate::machinery::meta::name(cfg);
        let list = cfg.get("webhooks").and_then(Value::as_array);
        for (i, hook) in list.into_iter().flatten().enumerate() {
            out.push(parse(name, i, hook));
        }
    }
    out
}

/// Whether any webhook configuration is stored (the cheap test every write makes).
pub fn any_configuration(st: &State) -> bool {
    [VALIDATING, MUTATING].into_iter().any(|plural| {
        st.resource(&GroupResourceRef::new(GROUP, plural))
            .is_some_and(|rs| !rs.objects.is_empty())
    })
}

/// The parsed webhooks, rebuilt when a configuration changes (keyed by the configurations'
/// uids and resourceVersions).
#[derive(Debug, Default)]
pub struct HookCache {
    cached: Mutex<Option<(String, Arc<Hooks>)>>,
}

impl HookCache {
    /// The webhooks as currently configured.
    pub fn current(&self, st: &State) -> Arc<Hooks> {
        let validating = configurations(st, VALIDATING);
        let mutating = configurations(st, MUTATING);
        let mut key = String::new();
        for c in validating.iter().chain(&mutating) {
            key.push_str(crate::machinery::meta::uid(c));
            key.push('@');
            key.push_str(crate::machinery::meta::resource_version(c));
            key.push(',');
        }
        let mut cached = self.cached.lock();
        if let Some((k, hooks)) = cached.as_ref()
            && *k == key
        {
            return hooks.clone();
        }
        let hooks = Arc::new(Hooks {
            mutating: webhooks(&mutating),
            validating: webhooks(&validating),
        });
        *cached = Some((key, hooks.clone()));
        hooks
    }
}
