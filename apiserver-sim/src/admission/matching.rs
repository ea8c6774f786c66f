//! Which webhooks a request calls: the request's admission attributes, and the matching a
//! real server does (apiserver `admission/plugin/webhook/generic` and `predicates`): rules
//! (operations, groups, versions, resources with subresources and `*`, scope), `matchPolicy:
//! Equivalent` (the same resource in another served version), `namespaceSelector` and
//! `objectSelector`.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::hooks::{Rule, Webhook};
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::selector::selector_matches;

/// The admission operation of a request. (`CONNECT`, which rules may name, belongs to exec,
/// attach, port-forward and proxy requests: the simulator serves none of them.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// POST (and an apply patch that creates).
    Create,
    /// PUT and PATCH.
    Update,
    /// DELETE (and each object of a deletecollection).
    Delete,
}

impl Operation {
    /// As written in rules and in `AdmissionRequest.operation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
        }
    }
}

/// What admission knows of a request.
#[derive(Debug, Clone)]
pub struct Attributes {
    /// The operation.
    pub operation: Operation,
    /// The resource addressed.
    pub info: Arc<ResourceInfo>,
    /// The version of the request (its objects are in this version).
    pub version: String,
    /// Subresource (`status`), or empty.
    pub subresource: String,
    /// Object name (empty for a create with `generateName`).
    pub name: String,
    /// Namespace (a namespace's own name for requests on a namespace; empty if cluster-scoped).
    pub namespace: String,
    /// The new object (none on delete).
    pub object: Option<Value>,
    /// The stored object (update and delete).
    pub old_object: Option<Value>,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The operation's options (`CreateOptions`, `UpdateOptions`, `PatchOptions`, `DeleteOptions`).
    pub options: Value,
}

/// A webhook that matched, and the version it is called in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The version the webhook's rule matched (the request's, or with `matchPolicy:
    /// Equivalent` another served version of the resource).
    pub version: String,
}

fn exact_or_wildcard(list: &[String], value: &str) -> bool {
    list.iter().any(|x| x == "*" || x == value)
}

/// Whether a rule matches the request, with the resource seen at `version`.
fn rule_matches(rule: &Rule, attrs: &Attributes, version: &str) -> bool {
    let info = &attrs.info;
    let is_namespace_resource = info.group.is_empty() && info.plural == "namespaces";
    let scope = match rule.scope.as_str() {
        "Namespaced" => !is_namespace_resource && !attrs.namespace.is_empty(),
        "Cluster" => is_namespace_resource || attrs.namespace.is_empty(),
        _ => true,
    };
    let op = rule
        .operations
        .iter()
        .any(|o| o == "*" || o == attrs.operation.as_str());
    let resource = rule.resources.iter().any(|r| {
        let (res, sub) = r.split_once('/').unwrap_or((r.as_str(), ""));
        (res == "*" || res == info.plural) && (sub == "*" || sub == attrs.subresource)
    });
    scope
        && op
        && exact_or_wildcard(&rule.groups, &info.group)
        && exact_or_wildcard(&rule.versions, version)
        && resource
}

fn is_empty_selector(selector: &Value) -> bool {
    let empty = |k: &str| match selector.get(k) {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    empty("matchLabels") && empty("matchExpressions")
}

fn labels_of(obj: Option<&Value>) -> Option<&Map<String, Value>> {
    obj.and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
}

/// The labels a `namespaceSelector` is matched against: `None` when the request is not
/// namespaced (never exempted), `Some(None)` when the namespace does not exist.
pub type NamespaceLabels = Option<Option<Map<String, Value>>>;

/// Whether the webhook is called for the request, and in which version.
/// `Err` carries the namespace that a selector needed and that does not exist.
pub fn should_call(
    hook: &Webhook,
    attrs: &Attributes,
    namespace_labels: &NamespaceLabels,
) -> Result<Option<Invocation>, String> {
    let mut missing_namespace = false;
    if !is_empty_selector(&hook.namespace_selector) {
        match namespace_labels {
            None => {}
            Some(None) => missing_namespace = true,
            Some(Some(labels)) if !selector_matches(&hook.namespace_selector, labels) => {
                return Ok(None);
            }
            Some(Some(_)) => {}
        }
    }
    if !is_empty_selector(&hook.object_selector) {
        let empty = Map::new();
        let matches = |o: Option<&Value>| {
            o.is_some() && selector_matches(&hook.object_selector, labels_of(o).unwrap_or(&empty))
        };
        if !matches(attrs.object.as_ref()) && !matches(attrs.old_object.as_ref()) {
            return Ok(None);
        }
    }
    let mut version = hook
        .rules
        .iter()
        .any(|r| rule_matches(r, attrs, &attrs.version))
        .then(|| attrs.version.clone());
    if version.is_none() && hook.equivalent {
        // Earlier rules first, then the served versions in the server's order.
        version = hook.rules.iter().find_map(|r| {
            attrs
                .info
                .versions
                .iter()
                .filter(|v| **v != attrs.version)
                .find(|v| rule_matches(r, attrs, v))
                .cloned()
        });
    }
    let Some(version) = version else {
        return Ok(None);
    };
    if missing_namespace {
        return Err(attrs.namespace.clone());
    }
    Ok(Some(Invocation { version }))
}
