//! [`ResourceInfo`]: what the server knows about each resource type (names, scope,
//! subresources, verbs, rules, typed checks, conversions), and [`GroupResource`], the
//! identity of a resource type.

use serde_json::Value;

use super::typed::Check;

/// Every verb a resource may support, in discovery order.
pub const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs of a custom resource, in the order the CRD handler lists them in discovery.
pub const CUSTOM_RESOURCE_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// How the objects of a served type differ from their stored form: the stored form is the
/// storage version (or another resource's form, see [`ResourceInfo::stored_with`]); each
/// function gets the served version and converts a whole object, `apiVersion` and `kind`
/// included.
#[derive(Debug, Clone, Copy)]
pub struct Conversion {
    /// Served form (at a version) to stored form.
    pub to_stored: fn(&str, Value) -> Value,
    /// Stored form to served form (at a version).
    pub to_served: fn(&str, &Value) -> Value,
}

/// Two conversions are the same when they are the same functions.
impl PartialEq for Conversion {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::fn_addr_eq(self.to_stored, other.to_stored)
            && std::ptr::fn_addr_eq(self.to_served, other.to_served)
    }
}

/// How `metadata.generation` is maintained for a type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenerationRule {
    /// No generation (ConfigMap, Secret, Event, Namespace, ...).
    None,
    /// 1 on create, +1 whenever `spec` changes (built-ins with a spec).
    Spec,
    /// 1 on create, +1 whenever anything outside `metadata` (and outside `status`
    /// when a status subresource exists) changes: custom resources.
    AllButMetadata,
}

/// JSON paths (dotted, leading dot) of a scale subresource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// Where the desired replica count lives, e.g. `.spec.replicas`.
    pub spec_replicas: String,
    /// Where the observed replica count lives, e.g. `.status.replicas`.
    pub status_replicas: String,
    /// Where a label selector string or object lives, if any.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// One of these paths as a JSON pointer (`.spec.replicas` is `/spec/replicas`).
    pub fn pointer(path: &str) -> String {
        path.replace('.', "/")
    }
}

/// Everything the server needs to serve one resource type.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceInfo {
    /// API group; empty for the core group.
    pub group: String,
    /// Served versions; the first is the storage and preferred version.
    pub versions: Vec<String>,
    /// Lowercase plural used in URLs.
    pub plural: String,
    /// Lowercase singular.
    pub singular: String,
    /// Kind.
    pub kind: String,
    /// Kind of lists (`<Kind>List` by default).
    pub list_kind: String,
    /// Namespaced (true) or cluster-scoped.
    pub namespaced: bool,
    /// Short names advertised in discovery.
    pub short_names: Vec<String>,
    /// Categories advertised in discovery (`all`).
    pub categories: Vec<String>,
    /// Whether `/status` is a separate subresource.
    pub status_subresource: bool,
    /// The scale subresource, when served.
    pub scale: Option<ScalePaths>,
    /// Generation rule.
    pub generation: GenerationRule,
    /// Built-in type (strategic merge patch allowed, unconditional update allowed).
    pub builtin: bool,
    /// Whether a completed DELETE replies with the object (true) or a Success `Status`.
    pub delete_returns_object: bool,
    /// The OpenAPI v3 schema of each served version (CRDs only), by version.
    pub schemas: Vec<(String, serde_json::Value)>,
    /// Verbs served on the resource (discovery lists them; others answer 405).
    pub verbs: &'static [&'static str],
    /// Built-in types: the typed check of each served version (the object must decode
    /// as its k8s-openapi type).
    pub checks: Vec<(String, Check)>,
    /// Objects live in another resource's store (events.k8s.io events are core events):
    /// that resource's identity. Reads and writes go through [`ResourceInfo::conversion`].
    pub stored_with: Option<GroupResource>,
    /// Conversion between the served versions and the stored form, when they differ in more
    /// than `apiVersion`.
    pub conversion: Option<Conversion>,
    /// The `additionalPrinterColumns` of each served version (CRDs only), by version.
    pub printer_columns: Vec<(String, serde_json::Value)>,
}

/// `name.group`, or `name` in the core group (""), as error messages name a resource or kind.
pub fn group_qualified(name: &str, group: &str) -> String {
    if group.is_empty() {
        name.to_string()
    } else {
        format!("{name}.{group}")
    }
}

impl ResourceInfo {
    /// `plural` or `plural.group`, as used in error messages.
    pub fn qualified(&self) -> String {
        group_qualified(&self.plural, &self.group)
    }

    /// `Kind` or `Kind.group`, as used in Invalid messages.
    pub fn kind_qualified(&self) -> String {
        group_qualified(&self.kind, &self.group)
    }

    /// `apiVersion` for a served version.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    /// The storage version.
    pub fn storage_version(&self) -> &str {
        self.versions.first().map(String::as_str).unwrap_or("v1")
    }

    /// The key of the store holding the objects: the resource's identity, or the one of
    /// the resource it is stored with.
    pub fn key(&self) -> GroupResource {
        match &self.stored_with {
            Some(k) => k.clone(),
            None => self.served_key(),
        }
    }

    /// The store key, borrowed (no allocation).
    pub fn key_ref(&self) -> GroupResourceRef<'_> {
        match &self.stored_with {
            Some(k) => GroupResourceRef::new(&k.group, &k.resource),
            None => GroupResourceRef::new(&self.group, &self.plural),
        }
    }

    /// The resource's own identity (group and plural it is served under).
    pub fn served_key(&self) -> GroupResource {
        GroupResource {
            group: self.group.clone(),
            resource: self.plural.clone(),
        }
    }

    /// Whether objects go out exactly as stored at `version` (no conversion, same
    /// `apiVersion`).
    pub fn as_stored(&self, version: &str) -> bool {
        self.conversion.is_none() && version == self.storage_version()
    }

    /// The object as served at `version`: converted from its stored form, `apiVersion`
    /// set to the version's.
    pub fn to_served(&self, version: &str, obj: &Value) -> Value {
        if let Some(c) = &self.conversion {
            return (c.to_served)(version, obj);
        }
        let mut o = obj.clone();
        if let Some(m) = o.as_object_mut() {
            m.insert(
                "apiVersion".into(),
                Value::String(self.api_version(version)),
            );
        }
        o
    }

    /// The object in its stored form, from its served form at `version` (unchanged when
    /// the type has no conversion).
    pub fn to_stored(&self, version: &str, obj: Value) -> Value {
        match &self.conversion {
            Some(c) => (c.to_stored)(version, obj),
            None => obj,
        }
    }

    /// Whether `verb` is served.
    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }

    /// The typed check of a served version, for built-in types.
    pub fn check(&self, version: &str) -> Option<Check> {
        self.checks
            .iter()
            .find(|(v, _)| v == version)
            .map(|(_, c)| *c)
    }

    /// Whether this version is served.
    pub fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v == version)
    }

    /// The schema declared for a version, if any.
    pub fn schema(&self, version: &str) -> Option<&serde_json::Value> {
        self.schemas
            .iter()
            .find(|(v, _)| v == version)
            .map(|(_, s)| s)
    }
}

/// Group + plural resource: the identity of a resource type across versions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// API group (empty for core).
    pub group: String,
    /// Plural resource name.
    pub resource: String,
}

/// A borrowed [`GroupResource`] for lookups without allocating (hashes the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GroupResourceRef<'a> {
    /// API group (empty for core).
    pub group: &'a str,
    /// Plural resource name.
    pub resource: &'a str,
}

impl<'a> GroupResourceRef<'a> {
    /// The group and plural resource.
    pub const fn new(group: &'a str, resource: &'a str) -> Self {
        Self { group, resource }
    }
}

impl hashbrown::Equivalent<GroupResource> for GroupResourceRef<'_> {
    fn equivalent(&self, key: &GroupResource) -> bool {
        self.resource == key.resource && self.group == key.group
    }
}

impl GroupResource {
    /// Builds a key.
    pub fn new(group: &str, resource: &str) -> Self {
        Self {
            group: group.into(),
            resource: resource.into(),
        }
    }
}
