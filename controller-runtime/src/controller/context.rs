//! [`Context`]: what a reconcile gets besides its [`Request`](crate::controller::Request): the client, the
//! caches, the primary object (or its last known state once deleted) and write methods that
//! record what the controller wrote, so that the key's next reconcile never starts from a cache
//! older than those writes (see the module docs on staleness).

use std::fmt;
use std::sync::Arc;

use indexer::ObjectKey;
use informer::Object;
use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Api, Client};
use serde::Serialize;
use workqueue::Priority;

use crate::cache::{Cache, CacheKind, CacheLister, Kind, WatchScope};
use crate::controller::state::ControllerState;
use crate::events::Recorder;

/// The context of one reconcile. Cheap to clone.
pub struct Context<K: Object> {
    state: Arc<ControllerState<K>>,
    key: ObjectKey,
    reconcile_id: Arc<str>,
    object: Option<Arc<K>>,
    deleted: Option<Arc<K>>,
    priority: Priority,
}

impl<K: Object> Clone for Context<K> {
    fn clone(&self) -> Self {
        Self {
            state: Arc::clone(&self.state),
            key: self.key.clone(),
            reconcile_id: Arc::clone(&self.reconcile_id),
            object: self.object.clone(),
            deleted: self.deleted.clone(),
            priority: self.priority,
        }
    }
}

impl<K: Object> fmt::Debug for Context<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("controller", &self.state.name)
            .field("key", &self.key)
            .field("reconcile_id", &self.reconcile_id)
            .field("deleted", &self.deleted.is_some())
            .field("priority", &self.priority)
            .finish()
    }
}

impl<K: Object> Context<K> {
    pub(crate) fn new(
        state: Arc<ControllerState<K>>,
        key: ObjectKey,
        reconcile_id: Arc<str>,
        object: Option<Arc<K>>,
        deleted: Option<Arc<K>>,
        priority: Priority,
    ) -> Self {
        Self {
            state,
            key,
            reconcile_id,
            object,
            deleted,
            priority,
        }
    }

    /// The controller's name.
    pub fn controller_name(&self) -> &str {
        &self.state.name
    }

    /// The key of the object being reconciled.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// This reconcile's unique id (also in its tracing span).
    pub fn reconcile_id(&self) -> &str {
        &self.reconcile_id
    }

    /// The priority the key was queued with: [`Priority::LOW`] when it came from an
    /// informer's initial list or a resync, [`Priority::NORMAL`] for a live change, or what a
    /// requeue or an external source named. A requeue or retry keeps it unless the returned
    /// [`Action`](crate::controller::Action) names another. Always [`Priority::NORMAL`] with the plain
    /// queue.
    pub fn priority(&self) -> Priority {
        self.priority
    }

    /// The client, for reads that must bypass the cache and for writes to other objects.
    pub fn client(&self) -> &Client {
        &self.state.client
    }

    /// The controller's event recorder (events report as the controller's name).
    pub fn recorder(&self) -> &Recorder {
        &self.state.recorder
    }

    /// The manager's caches, for reading owned and watched objects.
    pub fn cache(&self) -> &Cache {
        &self.state.cache
    }

    /// The lister of the primary type's cache (every namespace the manager caches it in).
    pub fn lister(&self) -> CacheLister<K> {
        CacheLister::new(Arc::clone(&self.state.primary))
    }

    /// Whether the primary type's cache has synced (always true inside a reconcile).
    pub fn cache_synced(&self) -> bool {
        self.state.primary.has_synced()
    }

    /// The primary object from the cache, as it was when this reconcile started (from caches
    /// that had caught up with this controller's own earlier writes); `None` if it does not exist
    /// (see [`deleted`](Self::deleted)). The controller looks it up once per reconcile and hands
    /// it here, so every call returns the same object: a write made in this reconcile returns
    /// the stored object, and [`lister`](Self::lister) reads the cache as it is now.
    pub fn get(&self) -> Option<Arc<K>> {
        self.object.clone()
    }

    /// When the primary object is gone: its last known state, from the delete event (or from
    /// the tombstone of a deletion missed while the watch was down). `None` if the object exists
    /// or was never seen by this controller. Like [`get`](Self::get), a cheap clone of the
    /// shared object.
    pub fn deleted(&self) -> Option<Arc<K>> {
        self.deleted.clone()
    }

    /// Records that this reconcile wrote `object` (of any typed kind, through any client —
    /// say [`create_or_update`](crate::util::create_or_update) or a plain `kube::Api`), as the
    /// server returned it: the next reconcile of this key waits until every informer of that
    /// kind this controller watches (for the object's namespace) has synced past the version
    /// `object` carries (KEP-5647's `WroteAt`). The write methods of the context call it
    /// themselves. Nothing is recorded for a kind the controller does not watch, nor for an
    /// object without a `resourceVersion`.
    pub fn wrote<C: Kind>(&self, object: &C) {
        let meta = object.meta();
        self.state.staleness.record(
            &self.key,
            &<C as CacheKind>::spec().key,
            meta.namespace.as_deref(),
            meta.resource_version.as_deref(),
        );
    }

    /// Creates `object` (any typed kind, in its own namespace) and
    /// [records](Self::wrote) the write: a child the controller
    /// [`owns`](crate::controller::ControllerBuilder::owns) is in the cache before the key's next
    /// reconcile starts.
    pub async fn create<C: Kind + Serialize>(&self, object: &C) -> Result<C, kube::Error> {
        let api = <C::Scope as WatchScope>::api(
            self.state.client.clone(),
            object.meta().namespace.as_deref(),
        );
        let stored = api.create(&PostParams::default(), object).await?;
        self.wrote(&stored);
        Ok(stored)
    }

    /// Patches the object `name` of kind `C` in `namespace` (`None` for a cluster-scoped kind)
    /// and [records](Self::wrote) the write.
    pub async fn patch_object<C, P>(
        &self,
        namespace: Option<&str>,
        name: &str,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<C, kube::Error>
    where
        C: Kind + Serialize,
        P: Serialize + fmt::Debug,
    {
        let api = <C::Scope as WatchScope>::api(self.state.client.clone(), namespace);
        let stored = api.patch(name, params, patch).await?;
        self.wrote(&stored);
        Ok(stored)
    }

    /// Deletes the object `name` of kind `C` in `namespace` (`None` for a cluster-scoped kind).
    /// When the server answers with the object (deleted at once, or marked for deletion while
    /// finalizers remain) it is returned and the write [recorded](Self::wrote); `None` when the
    /// server answered with a status.
    pub async fn delete_object<C>(
        &self,
        namespace: Option<&str>,
        name: &str,
        params: &DeleteParams,
    ) -> Result<Option<C>, kube::Error>
    where
        C: Kind + Serialize,
    {
        let api = <C::Scope as WatchScope>::api(self.state.client.clone(), namespace);
        let answer = api.delete(name, params).await?.left();
        if let Some(object) = &answer {
            self.wrote(object);
        }
        Ok(answer)
    }
}

impl<K> Context<K>
where
    K: Kind + Serialize,
{
    /// An `Api` for the primary type in the request's namespace. Writes through it are not
    /// recorded unless passed to [`wrote`](Self::wrote); prefer [`replace`](Self::replace) and
    /// [`patch`](Self::patch) for the primary object.
    pub fn api(&self) -> Api<K> {
        <K::Scope as WatchScope>::api(self.state.client.clone(), self.key.namespace())
    }

    /// Replaces the primary object (optimistic concurrency on its `resourceVersion`) and
    /// [records](Self::wrote) the write: the next reconcile of this key starts from a cache
    /// that has seen at least the returned version.
    pub async fn replace(&self, obj: &K) -> Result<K, kube::Error> {
        let stored = self
            .api()
            .replace(self.key.name(), &PostParams::default(), obj)
            .await?;
        self.record(&stored);
        Ok(stored)
    }

    /// Replaces the primary object's status subresource; tracked like [`replace`](Self::replace).
    /// A status write leaves the generation alone, so with
    /// [`GenerationChanged`](crate::controller::predicate::GenerationChanged) on the primary
    /// watch its event never reconciles the object again — usually what you want; to take a
    /// next step after it, return [`Action::requeue`](crate::controller::Action::requeue).
    pub async fn replace_status(&self, obj: &K) -> Result<K, kube::Error> {
        let stored = self
            .api()
            .replace_status(self.key.name(), &PostParams::default(), obj)
            .await?;
        self.record(&stored);
        Ok(stored)
    }

    /// Patches the primary object; tracked like [`replace`](Self::replace).
    pub async fn patch<P: Serialize + fmt::Debug>(
        &self,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, kube::Error> {
        let stored = self.api().patch(self.key.name(), params, patch).await?;
        self.record(&stored);
        Ok(stored)
    }

    /// Patches the primary object's status subresource; tracked like [`replace`](Self::replace).
    /// Its event is dropped by [`GenerationChanged`](crate::controller::predicate::GenerationChanged)
    /// like [`replace_status`](Self::replace_status)'s.
    pub async fn patch_status<P: Serialize + fmt::Debug>(
        &self,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<K, kube::Error> {
        let stored = self
            .api()
            .patch_status(self.key.name(), params, patch)
            .await?;
        self.record(&stored);
        Ok(stored)
    }

    fn record(&self, stored: &K) {
        let meta = stored.meta();
        self.state.staleness.record(
            &self.key,
            &self.state.primary_kind,
            meta.namespace.as_deref(),
            meta.resource_version.as_deref(),
        );
    }
}

impl Context<DynamicObject> {
    /// An `Api` for the dynamic primary kind (its `ApiResource`) in the request's namespace,
    /// for reads that bypass the cache and for writes. Writes through it are not recorded for
    /// staleness.
    pub fn dynamic_api(&self) -> Api<DynamicObject> {
        let resource = &self.state.dyntype;
        match self.key.namespace() {
            Some(namespace) => Api::namespaced_with(self.state.client.clone(), namespace, resource),
            None => Api::all_with(self.state.client.clone(), resource),
        }
    }

    /// The dynamic primary kind's resource (group, version, kind, plural).
    pub fn resource(&self) -> &kube::api::ApiResource {
        &self.state.dyntype
    }
}
