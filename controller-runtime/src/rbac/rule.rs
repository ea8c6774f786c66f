//! [`Rule`] and [`Verb`]: one permission an operator needs — verbs on a resource (or one of
//! its subresources) of an API group, optionally only on named objects or in one namespace.

use std::collections::BTreeSet;
use std::fmt;

use k8s_openapi::api::rbac::v1::PolicyRule;

use crate::kind::{Kind, WatchScope};

/// A Kubernetes API verb, as RBAC rules name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Verb {
    /// Read one object.
    Get,
    /// Read a collection.
    List,
    /// Watch a collection (or one object).
    Watch,
    /// Create an object (or a subresource such as `serviceaccounts/token`).
    Create,
    /// Replace an object (PUT).
    Update,
    /// Patch an object (JSON, merge, strategic merge or server-side apply).
    Patch,
    /// Delete one object.
    Delete,
    /// Delete a collection.
    DeleteCollection,
}

impl Verb {
    /// Every verb, in the order rules list them.
    pub const ALL: [Verb; 8] = [
        Verb::Get,
        Verb::List,
        Verb::Watch,
        Verb::Create,
        Verb::Update,
        Verb::Patch,
        Verb::Delete,
        Verb::DeleteCollection,
    ];

    /// The verb as RBAC spells it (`deletecollection`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One permission: `verbs` on `resource` (or `resource/subresource`) of an API group.
///
/// Build it from a type, `Rule::of::<Deployment>().verbs([Verb::Create, Verb::Update])`, or by
/// name for types without a Rust type, `Rule::resource("example.com", "widgets", true)`.
/// `.status()` / `.subresource("scale")` address a subresource, `.named([..])` restricts it to
/// some objects (`resourceNames`), `.in_namespace(ns)` to one namespace (it then lands in a
/// `Role` there instead of the `ClusterRole`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub(crate) group: String,
    pub(crate) resource: String,
    pub(crate) namespaced: bool,
    pub(crate) namespace: Option<String>,
    pub(crate) names: BTreeSet<String>,
    pub(crate) verbs: BTreeSet<Verb>,
}

impl Rule {
    /// A rule on the resource of `K` (its group, plural and scope), with no verbs yet.
    pub fn of<K: Kind>() -> Self {
        Self::resource(
            &K::group(&()),
            &K::plural(&()),
            <K::Scope as WatchScope>::NAMESPACED,
        )
    }

    /// A rule on `resource` (plural, e.g. `deployments`) of API `group` (`""` for core);
    /// `namespaced` says whether its objects live in namespaces.
    pub fn resource(group: &str, resource: &str, namespaced: bool) -> Self {
        Self {
            group: group.to_owned(),
            resource: resource.to_owned(),
            namespaced,
            namespace: None,
            names: BTreeSet::new(),
            verbs: BTreeSet::new(),
        }
    }

    /// The same rule on a subresource instead (`status`, `scale`, `finalizers`, `token`, ...).
    pub fn subresource(mut self, subresource: &str) -> Self {
        let base = self
            .resource
            .split('/')
            .next()
            .unwrap_or_default()
            .to_owned();
        self.resource = format!("{base}/{subresource}");
        self
    }

    /// The same rule on the `status` subresource (what `replace_status` and `patch_status`
    /// write).
    pub fn status(self) -> Self {
        self.subresource("status")
    }

    /// Adds verbs.
    pub fn verbs(mut self, verbs: impl IntoIterator<Item = Verb>) -> Self {
        self.verbs.extend(verbs);
        self
    }

    /// Restricts the rule to objects with these names (`resourceNames`). A `create` or an
    /// unfiltered `list` names no object, so such a rule never allows them.
    pub fn named<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.names.extend(names.into_iter().map(Into::into));
        self
    }

    /// Restricts the rule to `namespace`: it is granted by a `Role` there, not by the
    /// `ClusterRole` (for namespaced resources only; ignored for cluster-scoped ones).
    pub fn in_namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// The API group (`""` for core).
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The resource, `resource/subresource` for a subresource.
    pub fn resource_name(&self) -> &str {
        &self.resource
    }

    /// The verbs, in rule order.
    pub fn verb_set(&self) -> &BTreeSet<Verb> {
        &self.verbs
    }

    /// Whether the resource's objects live in namespaces.
    pub fn is_namespaced(&self) -> bool {
        self.namespaced
    }

    /// The namespace the rule is pinned to ([`in_namespace`](Self::in_namespace)), if any.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// The rule as RBAC writes it.
    pub fn to_policy_rule(&self) -> PolicyRule {
        PolicyRule {
            api_groups: Some(vec![self.group.clone()]),
            resources: Some(vec![self.resource.clone()]),
            resource_names: (!self.names.is_empty()).then(|| self.names.iter().cloned().collect()),
            verbs: self.verbs.iter().map(|v| v.as_str().to_owned()).collect(),
            non_resource_urls: None,
        }
    }
}

impl fmt::Display for Rule {
    /// `apps/deployments: create,update` (`core` for the core group; `[names]` and
    /// `in <namespace>` when restricted).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        write!(f, "{group}/{}", self.resource)?;
        if !self.names.is_empty() {
            let names: Vec<&str> = self.names.iter().map(String::as_str).collect();
            write!(f, " [{}]", names.join(","))?;
        }
        if let Some(ns) = &self.namespace {
            write!(f, " in {ns}")?;
        }
        let verbs: Vec<&str> = self.verbs.iter().map(|v| v.as_str()).collect();
        write!(f, ": {}", verbs.join(","))
    }
}
