//! [`Webhook`]: one admission webhook to register — its handler, the path it is served on, and
//! what the webhook configuration needs to route requests to it (kind, operations, policy).

use std::fmt;
use std::sync::Arc;

use k8s_openapi::api::admissionregistration::v1::RuleWithOperations;
use kube::core::admission::Operation;
use serde::Serialize;

use crate::kind::{Kind, WatchScope};
use crate::webhook::admission::{
    AdmissionHandler, AdmissionHook, Defaulter, DefaulterHook, RawHook, Validator, ValidatorHook,
};
use crate::webhook::paths::{mutate_path, validate_path};

/// What the API server does when a webhook cannot be called or fails (`failurePolicy`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Refuse the request (the default, as controller-runtime's markers).
    #[default]
    Fail,
    /// Let the request through.
    Ignore,
}

impl FailurePolicy {
    /// The API's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fail => "Fail",
            Self::Ignore => "Ignore",
        }
    }
}

/// The kind a typed webhook serves, for its configuration's rules.
#[derive(Clone, Debug)]
pub(crate) struct Target {
    pub(crate) group: String,
    pub(crate) version: String,
    pub(crate) kind: String,
    pub(crate) plural: String,
    pub(crate) namespaced: bool,
}

impl Target {
    fn of<K: Kind>() -> Self {
        Self {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespaced: <K::Scope as WatchScope>::NAMESPACED,
        }
    }
}

/// An admission webhook to register with a [`WebhookServer`](crate::webhook::WebhookServer)
/// (or [`Manager::add_webhook`](crate::manager::Manager::add_webhook)). Cheap to clone: keep a clone to
/// generate the webhook configuration with
/// [`validating_webhook_configuration`](crate::webhook::validating_webhook_configuration).
#[derive(Clone)]
pub struct Webhook {
    pub(crate) path: String,
    pub(crate) hook: Arc<dyn AdmissionHook>,
    pub(crate) mutating: bool,
    pub(crate) target: Option<Target>,
    pub(crate) name: Option<String>,
    pub(crate) operations: Vec<Operation>,
    pub(crate) failure_policy: FailurePolicy,
    pub(crate) rules: Option<Vec<RuleWithOperations>>,
}

impl fmt::Debug for Webhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhook")
            .field("path", &self.path)
            .field("mutating", &self.mutating)
            .field("target", &self.target)
            .field("name", &self.name)
            .field("operations", &self.operations)
            .field("failure_policy", &self.failure_policy)
            .finish_non_exhaustive()
    }
}

impl Webhook {
    /// A validating webhook for kind `K`, served on `/validate-<group>-<version>-<kind>`
    /// ([`validate_path`](crate::webhook::validate_path)); its configuration sends `CREATE` and
    /// `UPDATE` unless [`operations`](Self::operations) says otherwise.
    pub fn validator<K: Kind>(validator: impl Validator<K>) -> Self {
        let target = Target::of::<K>();
        Self::new(
            validate_path(&target.group, &target.version, &target.kind),
            Arc::new(ValidatorHook::<K, _>::new(validator)),
            false,
            Some(target),
        )
    }

    /// A mutating webhook for kind `K` that applies `defaulter`, served on
    /// `/mutate-<group>-<version>-<kind>` ([`mutate_path`](crate::webhook::mutate_path)).
    pub fn defaulter<K: Kind + Serialize>(defaulter: impl Defaulter<K>) -> Self {
        let target = Target::of::<K>();
        Self::new(
            mutate_path(&target.group, &target.version, &target.kind),
            Arc::new(DefaulterHook::<K, _>::new(defaulter)),
            true,
            Some(target),
        )
    }

    /// A webhook on `path` answered by a raw [`AdmissionHandler`]; validating unless marked
    /// [`mutating`](Self::mutating). The configuration helpers include it only once it has
    /// [`rules`](Self::rules).
    pub fn raw(path: impl Into<String>, handler: impl AdmissionHandler) -> Self {
        Self::new(path.into(), Arc::new(RawHook(handler)), false, None)
    }

    fn new(
        path: String,
        hook: Arc<dyn AdmissionHook>,
        mutating: bool,
        target: Option<Target>,
    ) -> Self {
        Self {
            path,
            hook,
            mutating,
            target,
            name: None,
            operations: vec![Operation::Create, Operation::Update],
            failure_policy: FailurePolicy::Fail,
            rules: None,
        }
    }

    /// Serve on `path` instead (controller-runtime's `WithValidatorCustomPath`); it must match
    /// `^((/[a-zA-Z0-9-_]+)+|/)$`, checked when registered.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// The webhook's name in its configuration (default: `v<kind>-<version>.<group>.kb.io` for
    /// a validator, `m…` for a defaulter, `core` standing for the core group; derived from the
    /// path for a raw webhook). It must be a DNS name of at least three labels.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The operations the configuration's rules send to this webhook (default `CREATE` and
    /// `UPDATE`); add `DELETE` for [`Validator::validate_delete`]. Explicit
    /// [`rules`](Self::rules) carry their own operations instead.
    pub fn operations(mut self, operations: impl IntoIterator<Item = Operation>) -> Self {
        self.operations = operations.into_iter().collect();
        self
    }

    /// What the API server does when this webhook cannot be called (default `Fail`).
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }

    /// Mark a raw webhook as mutating (it answers with patches), so the configuration helpers
    /// put it in the `MutatingWebhookConfiguration`.
    pub fn mutating(mut self, mutating: bool) -> Self {
        self.mutating = mutating;
        self
    }

    /// The rules of this webhook's configuration entry, replacing those derived from its kind
    /// (the only rules a raw webhook has).
    pub fn rules(mut self, rules: Vec<RuleWithOperations>) -> Self {
        self.rules = Some(rules);
        self
    }

    /// The path it is served on.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Whether it is a mutating webhook.
    pub fn is_mutating(&self) -> bool {
        self.mutating
    }

    /// Its name in the webhook configuration.
    pub fn name(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        let prefix = if self.mutating { 'm' } else { 'v' };
        match &self.target {
            Some(target) => {
                let group = if target.group.is_empty() {
                    "core"
                } else {
                    &target.group
                };
                format!(
                    "{prefix}{}-{}.{group}.kb.io",
                    target.kind.to_lowercase(),
                    target.version
                )
            }
            None => {
                let path: String = self
                    .path
                    .trim_matches('/')
                    .chars()
                    .map(|c| match c {
                        '/' | '_' => '-',
                        c => c.to_ascii_lowercase(),
                    })
                    .collect();
                let path = if path.is_empty() { "root" } else { &path };
                format!("{prefix}{path}.webhook.kb.io")
            }
        }
    }

    /// The configuration rules: the explicit ones, or those derived from the kind.
    pub(crate) fn effective_rules(&self) -> Option<Vec<RuleWithOperations>> {
        if let Some(rules) = &self.rules {
            return Some(rules.clone());
        }
        let target = self.target.as_ref()?;
        let operations = self
            .operations
            .iter()
            .map(|operation| {
                match operation {
                    Operation::Create => "CREATE",
                    Operation::Update => "UPDATE",
                    Operation::Delete => "DELETE",
                    Operation::Connect => "CONNECT",
                }
                .to_owned()
            })
            .collect();
        Some(vec![RuleWithOperations {
            api_groups: Some(vec![target.group.clone()]),
            api_versions: Some(vec![target.version.clone()]),
            operations: Some(operations),
            resources: Some(vec![target.plural.clone()]),
            scope: Some(
                if target.namespaced {
                    "Namespaced"
                } else {
                    "Cluster"
                }
                .to_owned(),
            ),
        }])
    }
}
