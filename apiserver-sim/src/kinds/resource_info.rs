//! [`ResourceInfo`]: what the server knows about each resource type (names, scope,
//! subresources, rules), and [`GroupResource`], the identity of a resource type.

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
    /// The `additionalPrinterColumns` of each served version (CRDs only), by version.
    pub printer_columns: Vec<(String, serde_json::Value)>,
}

impl ResourceInfo {
    /// `plural` or `plural.group`, as used in error messages.
    pub fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// `Kind` or `Kind.group`, as used in Invalid messages.
    pub fn kind_qualified(&self) -> String {
        if self.group.is_empty() {
            self.kind.clone()
        } else {
            format!("{}.{}", self.kind, self.group)
        }
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

    /// The resource's identity key.
    pub fn key(&self) -> GroupResource {
        GroupResource {
            group: self.group.clone(),
            resource: self.plural.clone(),
        }
    }

    /// The identity key, borrowed (no allocation).
    pub fn key_ref(&self) -> GroupResourceRef<'_> {
        GroupResourceRef {
            group: &self.group,
            resource: &self.plural,
        }
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
