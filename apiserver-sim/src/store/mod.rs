//! Object storage: one global resourceVersion counter, per-resource objects as JSON,
//! a bounded event history per resource and the broadcast that feeds watches.
//!
//! Every read, write and history append happens under one lock (held only for
//! in-memory work), which gives the list-then-watch guarantee: a client that lists at
//! RV R and watches from R sees every later change exactly once.

mod history;
mod line;
mod reclaim;
pub(crate) mod snapshot;

use std::collections::{BTreeMap, btree_map};

use hashbrown::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::Value;
use tokio::sync::{Notify, broadcast};

use std::hash::Hash;

use hashbrown::Equivalent;

use crate::machinery::resource_info::{GroupResource, ResourceInfo};

pub use history::{Event, EventType};
use line::{encode_line, line_object};
pub use reclaim::Reclaim;

/// Key of an object inside its resource: (namespace, name); namespace "" when cluster-scoped.
pub type ObjKey = (String, String);

/// Retained events after an RV plus the live subscription that continues them.
pub(crate) type Resume = (Vec<Arc<Event>>, broadcast::Receiver<Arc<Event>>);

/// Tunables of the store.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// Events kept per resource for watches that resume from an RV.
    pub history_limit: usize,
    /// Per-resource broadcast buffer; a watcher lagging further behind is closed.
    pub broadcast_capacity: usize,
    /// First resourceVersion handed out is this plus one.
    pub initial_rv: u64,
    /// Whether writes of a namespace's `default` ServiceAccount or `kube-root-ca.crt`
    /// ConfigMap wake the controllers (when those are kept in every namespace).
    pub namespace_defaults: bool,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            history_limit: 10_000,
            broadcast_capacity: 65_536,
            initial_rv: 1000,
            namespace_defaults: false,
        }
    }
}

/// A stored object with its JSON encoding (computed once per write, shared by lists,
/// initial watch events and the write's own watch event).
#[derive(Debug, Clone)]
pub struct Stored {
    /// The object.
    pub obj: Arc<Value>,
    /// `obj` as compact JSON; empty when not computed (objects rebuilt from history).
    pub json: Bytes,
}

impl Stored {
    /// Wraps an object whose encoding is not known yet.
    pub fn new(obj: Arc<Value>) -> Self {
        Self {
            obj,
            json: Bytes::new(),
        }
    }
}

/// Objects, history and watch fan-out of one resource type.
pub struct ResourceStore {
    /// What is served.
    pub info: Arc<ResourceInfo>,
    /// Current objects in key order.
    pub objects: BTreeMap<ObjKey, Stored>,
    pub(crate) history: history::History,
    /// The live event broadcast, made on the first subscription (a broadcast buffer is
    /// allocated whole, and most of the many built-in resources are never watched).
    tx: std::sync::OnceLock<broadcast::Sender<Arc<Event>>>,
    /// Capacity of that broadcast.
    capacity: usize,
}

/// The whole state of the server.
pub struct State {
    /// The global resourceVersion: RV of the last write.
    pub rv: u64,
    /// Every served resource type that has its own store.
    pub resources: HashMap<GroupResource, ResourceStore>,
    /// Served resource types whose objects live in another one's store (events.k8s.io
    /// events), by the identity they are served under.
    pub aliases: HashMap<GroupResource, Arc<ResourceInfo>>,
    /// Events handed back by watchers for the writer to free.
    pub reclaim: Arc<Reclaim>,
    /// Bumped whenever a resource type starts or stops being served (or changes), so that
    /// callers may cache lookups.
    pub registry_version: u64,
    config: StoreConfig,
    /// Woken after writes the background controllers care about.
    pub(crate) controllers: Arc<Notify>,
    /// uids of every stored object (to spot dangling owner references cheaply).
    uids: hashbrown::HashSet<String>,
    /// Stored objects that have owner references.
    owned: usize,
    /// Stored objects that carry a deletionTimestamp.
    deleting: usize,
    /// Every stored namespace and whether it is terminating: every namespaced write checks
    /// its namespace, and this answers without building a key or searching the objects.
    namespaces: HashMap<String, bool>,
}

impl State {
    /// A state serving the given resource types.
    pub fn new(
        config: StoreConfig,
        infos: Vec<Arc<ResourceInfo>>,
        controllers: Arc<Notify>,
    ) -> Self {
        let mut s = Self {
            rv: config.initial_rv,
            resources: HashMap::new(),
            aliases: HashMap::new(),
            registry_version: 0,
            reclaim: Arc::default(),
            config,
            controllers,
            uids: hashbrown::HashSet::new(),
            owned: 0,
            deleting: 0,
            namespaces: HashMap::new(),
        };
        for info in infos {
            s.register(info);
        }
        s
    }

    /// Starts serving a resource type (or replaces its description, keeping its objects).
    pub fn register(&mut self, info: Arc<ResourceInfo>) {
        self.registry_version += 1;
        if info.stored_with.is_some() {
            self.aliases.insert(info.served_key(), info);
            return;
        }
        let key = info.key();
        if let Some(rs) = self.resources.get_mut(&key) {
            rs.info = info;
            return;
        }
        self.resources.insert(
            key,
            ResourceStore {
                info,
                objects: BTreeMap::new(),
                history: history::History::new(self.rv, self.config.history_limit),
                tx: std::sync::OnceLock::new(),
                capacity: self.config.broadcast_capacity.max(16),
            },
        );
    }

    /// Every served resource type: those with a store and those stored with another.
    pub fn served(&self) -> impl Iterator<Item = &Arc<ResourceInfo>> {
        self.resources
            .values()
            .map(|r| &r.info)
            .chain(self.aliases.values())
    }

    /// Stops serving a resource type; its objects vanish and its watches end.
    pub fn unregister(&mut self, key: &GroupResource) {
        self.registry_version += 1;
        if let Some(rs) = self.resources.remove(key) {
            if is_namespaces(&rs.info) {
                self.namespaces.clear();
            }
            for s in rs.objects.values() {
                self.forget(&s.obj);
            }
        }
    }

    /// Whether namespace `ns` exists (Some) and is terminating (Some(true)).
    pub fn namespace_terminating(&self, ns: &str) -> Option<bool> {
        self.namespaces.get(ns).copied()
    }

    /// Bookkeeping for an object leaving the store.
    fn forget(&mut self, obj: &Value) {
        self.uids.remove(crate::machinery::meta::uid(obj));
        if !crate::machinery::meta::owner_refs(obj).is_empty() {
            self.owned = self.owned.saturating_sub(1);
        }
        if crate::machinery::meta::is_deleting(obj) {
            self.deleting = self.deleting.saturating_sub(1);
        }
    }

    /// Whether an object references an owner uid that is not stored.
    fn has_dangling_owner(&self, obj: &Value) -> bool {
        crate::machinery::meta::owner_refs(obj).iter().any(|r| {
            r.get("uid")
                .and_then(Value::as_str)
                .is_none_or(|u| !self.uids.contains(u))
        })
    }

    /// Looks a served resource up by group, version and plural.
    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        let key = GroupResource::new(group, plural);
        self.resources
            .get(&key)
            .map(|r| &r.info)
            .or_else(|| self.aliases.get(&key))
            .filter(|info| info.serves(version))
            .cloned()
    }

    /// The served type of a resource (with its own store or stored with another).
    pub fn served_info(&self, key: &GroupResource) -> Option<Arc<ResourceInfo>> {
        self.resources
            .get(key)
            .map(|r| &r.info)
            .or_else(|| self.aliases.get(key))
            .cloned()
    }

    /// The store of a resource.
    pub fn resource<Q: Hash + Equivalent<GroupResource> + ?Sized>(
        &self,
        key: &Q,
    ) -> Option<&ResourceStore> {
        self.resources.get(key)
    }

    /// One object.
    pub fn get<Q: Hash + Equivalent<GroupResource> + ?Sized>(
        &self,
        key: &Q,
        obj: &ObjKey,
    ) -> Option<Arc<Value>> {
        self.resources
            .get(key)?
            .objects
            .get(obj)
            .map(|s| s.obj.clone())
    }

    /// Persists an object (create or update): bumps the RV, stamps the object, records and
    /// broadcasts the event. Returns the stored object.
    pub fn put<Q: Hash + Equivalent<GroupResource> + ?Sized>(
        &mut self,
        key: &Q,
        obj: Value,
    ) -> Arc<Value> {
        let okey = (
            crate::machinery::meta::namespace(&obj).to_string(),
            crate::machinery::meta::name(&obj).to_string(),
        );
        self.put_at(key, okey, obj)
    }

    /// [`State::put`] for a caller that already knows the object's key (its namespace and
    /// name, which must match the object's).
    pub fn put_at<Q: Hash + Equivalent<GroupResource> + ?Sized>(
        &mut self,
        key: &Q,
        okey: ObjKey,
        mut obj: Value,
    ) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        if rv.is_multiple_of(reclaim::DRAIN_EVERY) {
            self.reclaim.drain();
        }
        crate::machinery::meta::set_u64(&mut obj, "resourceVersion", rv);
        let obj = Arc::new(obj);
        let Some(rs) = self.resources.get_mut(key) else {
            return obj;
        };
        let ns = history::InlineNs::new(&okey.0);
        let wake = Self::wakes_controllers(&rs.info)
            || (self.config.namespace_defaults && is_namespace_default(&rs.info, &okey));
        let (kind, prev, line) = match rs.objects.entry(okey) {
            btree_map::Entry::Occupied(mut e) => {
                let line = encode_line(EventType::Modified.as_str(), &obj);
                let json = line_object(&line, EventType::Modified.as_str());
                let prev = e.insert(Stored {
                    obj: obj.clone(),
                    json,
                });
                (EventType::Modified, Some(prev.obj), line)
            }
            btree_map::Entry::Vacant(e) => {
                let line = encode_line(EventType::Added.as_str(), &obj);
                let json = line_object(&line, EventType::Added.as_str());
                e.insert(Stored {
                    obj: obj.clone(),
                    json,
                });
                (EventType::Added, None, line)
            }
        };
        let (had_owners, was_deleting) = prev
            .as_deref()
            .map_or((false, false), crate::machinery::meta::owned_and_deleting);
        let namespace = is_namespaces(&rs.info);
        rs.record(Event {
            rv,
            kind,
            obj: obj.clone(),
            prev,
            line,
            ns,
        });
        if kind == EventType::Added {
            self.uids
                .insert(crate::machinery::meta::uid(&obj).to_string());
        }
        let (has_owners, deleting) = crate::machinery::meta::owned_and_deleting(&obj);
        if namespace {
            let name = crate::machinery::meta::name(&obj);
            match self.namespaces.get_mut(name) {
                Some(terminating) => *terminating = deleting,
                None => {
                    self.namespaces.insert(name.to_string(), deleting);
                }
            }
        }
        self.owned = (self.owned + usize::from(has_owners)).saturating_sub(usize::from(had_owners));
        self.deleting =
            (self.deleting + usize::from(deleting)).saturating_sub(usize::from(was_deleting));
        if wake || deleting || (has_owners && self.has_dangling_owner(&obj)) {
            self.controllers.notify_one();
        }
        obj
    }

    /// Removes an object: bumps the RV and emits DELETED with the last state stamped
    /// with the new RV. Returns that final state.
    pub fn remove<Q: Hash + Equivalent<GroupResource> + ?Sized>(
        &mut self,
        key: &Q,
        okey: &ObjKey,
    ) -> Option<Arc<Value>> {
        let rs = self.resources.get_mut(key)?;
        let prev = rs.objects.remove(okey)?.obj;
        self.rv += 1;
        let rv = self.rv;
        let mut last = (*prev).clone();
        crate::machinery::meta::set_str(&mut last, "resourceVersion", &rv.to_string());
        let last = Arc::new(last);
        let wake = Self::wakes_controllers(&rs.info)
            || (self.config.namespace_defaults && is_namespace_default(&rs.info, okey));
        if is_namespaces(&rs.info) {
            self.namespaces.remove(okey.1.as_str());
        }
        rs.record(Event::new(
            rv,
            EventType::Deleted,
            last.clone(),
            Some(prev.clone()),
        ));
        self.forget(&prev);
        // Dependents may now be dangling; terminating owners, namespaces and CRDs may be done.
        if wake || self.owned > 0 || self.deleting > 0 {
            self.controllers.notify_one();
        }
        Some(last)
    }

    /// Writes the background controllers react to: CRDs and namespaces.
    fn wakes_controllers(info: &ResourceInfo) -> bool {
        info.group == "apiextensions.k8s.io" || info.plural == "namespaces"
    }

    /// Discards all retained history up to the current RV: older watch and list RVs
    /// (and continue tokens) then get 410 Expired.
    pub fn compact(&mut self) {
        let rv = self.rv;
        for rs in self.resources.values_mut() {
            rs.history.compact(rv);
        }
    }

    /// Subscribes to a resource's live events and returns the retained events after
    /// `from_rv`, atomically. Err(oldest) when `from_rv` is older than the history window.
    pub(crate) fn watch_from(
        &self,
        key: &GroupResource,
        from_rv: u64,
    ) -> Option<Result<Resume, u64>> {
        let rs = self.resources.get(key)?;
        let rx = rs.subscribe();
        Some(rs.history.since(from_rv).map(|evs| (evs, rx)))
    }

    /// Subscribes to live events only.
    pub(crate) fn subscribe(&self, key: &GroupResource) -> Option<broadcast::Receiver<Arc<Event>>> {
        Some(self.resources.get(key)?.subscribe())
    }
}

impl ResourceStore {
    fn record(&mut self, ev: Event) {
        let ev = Arc::new(ev);
        self.history.push(ev.clone());
        // No channel or no receiver is fine: nobody watches.
        if let Some(tx) = self.tx.get() {
            let _ = tx.send(ev);
        }
    }

    /// A receiver of the live events from now on.
    fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.tx
            .get_or_init(|| broadcast::channel(self.capacity).0)
            .subscribe()
    }

    /// The oldest RV a watch may resume from.
    pub fn oldest_ok(&self) -> u64 {
        self.history.oldest_ok()
    }
}

/// A namespace's `default` ServiceAccount or `kube-root-ca.crt` ConfigMap.
fn is_namespace_default(info: &ResourceInfo, okey: &ObjKey) -> bool {
    info.group.is_empty()
        && match info.plural.as_str() {
            "serviceaccounts" => okey.1 == "default",
            "configmaps" => okey.1 == "kube-root-ca.crt",
            _ => false,
        }
}

/// Whether `info` is core/v1 namespaces.
fn is_namespaces(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::builtins::builtins;
    use crate::machinery::resource_info::GroupResource;
    use serde_json::json;

    #[test]
    fn namespace_map_follows_namespace_writes() {
        let mut st = State::new(StoreConfig::default(), builtins(), Arc::default());
        let namespaces = GroupResource::new("", "namespaces");
        assert_eq!(st.namespace_terminating("team-a"), None);
        st.put(&namespaces, json!({"metadata": {"name": "team-a"}}));
        assert_eq!(st.namespace_terminating("team-a"), Some(false));
        st.put(
            &namespaces,
            json!({"metadata": {"name": "team-a", "deletionTimestamp": "2025-01-01T00:00:00Z"}}),
        );
        assert_eq!(st.namespace_terminating("team-a"), Some(true));
        // Another resource's object of the same name is not a namespace.
        let configmaps = GroupResource::new("", "configmaps");
        st.put(
            &configmaps,
            json!({"metadata": {"name": "team-b", "namespace": "team-a"}}),
        );
        assert_eq!(st.namespace_terminating("team-b"), None);
        st.remove(&namespaces, &(String::new(), "team-a".to_string()));
        assert_eq!(st.namespace_terminating("team-a"), None);
    }
}
