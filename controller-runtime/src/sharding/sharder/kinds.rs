//! The kinds a sharder places: the ring's own kinds, assigned by the hash of their identity, and
//! owned kinds, which follow their controller owner's shard.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::ApiResource;

use crate::kind::Kind;
use crate::rbac::{Rule, Verb};
use crate::sharding::ring::ring_key;

/// How the objects of a kind are placed: the role a controller gives its kinds.
pub(crate) use crate::controller::ShardRole as Role;

/// One kind the sharder labels.
#[derive(Clone, Debug)]
pub(crate) struct ShardedKind {
    /// Group, version, kind and plural.
    pub resource: ApiResource,
    /// Whether the objects live in namespaces.
    pub namespaced: bool,
    /// How the objects are placed.
    pub role: Role,
    /// The namespaces whose objects the ring places (`None`: all; always `None` for a
    /// cluster-scoped kind): a manager restricted to namespaces shards only there.
    pub namespaces: Option<Vec<String>>,
}

impl ShardedKind {
    /// The kind `K` in `role`.
    pub fn of<K: Kind>(role: Role) -> Self {
        let namespaced = Rule::of::<K>().is_namespaced();
        Self::new(ApiResource::erase::<K>(&()), namespaced, role)
    }

    /// The kind of `resource` (namespaced or not) in `role`.
    pub fn new(resource: ApiResource, namespaced: bool, role: Role) -> Self {
        Self {
            resource,
            namespaced,
            role,
            namespaces: None,
        }
    }

    /// Only the objects of `namespaces` (`None`: all), for a namespaced kind.
    pub fn in_namespaces(mut self, namespaces: Option<Vec<String>>) -> Self {
        self.namespaces = namespaces.filter(|_| self.namespaced);
        self
    }

    /// Whether the ring places objects of this kind in `namespace`.
    // Asked by the assignment webhook only.
    #[cfg_attr(not(feature = "webhook"), allow(dead_code))]
    pub fn covers(&self, namespace: Option<&str>) -> bool {
        match (&self.namespaces, namespace) {
            (None, _) => true,
            (Some(namespaces), Some(namespace)) => {
                namespaces.iter().any(|known| known == namespace)
            }
            (Some(_), None) => false,
        }
    }

    /// What the sharder needs on the kind: to list and watch its objects' metadata, and to patch
    /// their labels — in each of its namespaces when restricted to some.
    pub fn rules(&self) -> Vec<Rule> {
        let rule = Rule::resource(&self.resource.group, &self.resource.plural, self.namespaced)
            .verbs([Verb::List, Verb::Watch, Verb::Patch]);
        match &self.namespaces {
            None => vec![rule],
            Some(namespaces) => namespaces
                .iter()
                .map(|namespace| rule.clone().in_namespace(namespace.clone()))
                .collect(),
        }
    }

    /// The identity the ring hashes for an object of this kind: `group/kind/namespace/name`
    /// (the same in every process, and distinct across kinds).
    pub fn key_of(&self, meta: &ObjectMeta) -> String {
        ring_key(
            &self.resource.group,
            &self.resource.kind,
            meta.namespace.as_deref().unwrap_or_default(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }

    /// Whether an owner reference's `apiVersion` and `kind` name this kind.
    pub fn is(&self, api_version: &str, kind: &str) -> bool {
        let group = api_version.rsplit_once('/').map_or("", |(group, _)| group);
        group == self.resource.group && kind == self.resource.kind
    }
}
