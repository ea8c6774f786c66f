//! Seeding: writes straight into the store, as the matching POST, PUT or DELETE would,
//! without HTTP (one object, or thousands with one lock per few hundred writes).

use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::handle::ApiServer;
use crate::error::{Error, Result};
use crate::machinery::resource_info::{GroupResource, ResourceInfo};

/// The resource and version an object's `apiVersion` and `kind` select.
fn resolve(st: &crate::store::State, obj: &Value) -> Result<(Arc<ResourceInfo>, String)> {
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let (group, version) = av.split_once('/').unwrap_or(("", av));
    st.served()
        .find(|info| info.kind == kind && info.group == group && info.serves(version))
        .map(|info| (info.clone(), version.to_string()))
        .ok_or_else(|| Error::UnknownResource(format!("{kind} in {av}")))
}

/// An object as `info` serves it at `version` (objects of most types are served as stored).
fn served(info: &ResourceInfo, version: &str, stored: &Value) -> Value {
    if info.as_stored(version) {
        stored.clone()
    } else {
        info.to_served(version, stored)
    }
}

/// Creates an object in the store, as a POST would (namespace "default" when missing).
fn create_locked(
    st: &mut crate::store::State,
    info: &ResourceInfo,
    version: &str,
    obj: Value,
) -> Result<Arc<Value>> {
    let ns = crate::machinery::meta::field(&obj, "namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    let ns = match (info.namespaced, ns) {
        (true, None) => Some("default".to_string()),
        (_, ns) => ns,
    };
    Ok(crate::ops::create(
        st,
        info,
        version,
        ns.as_deref(),
        obj,
        &Default::default(),
    )?)
}

/// Replaces an object in the store, as a PUT would; unconditional without
/// `metadata.resourceVersion`.
fn replace_locked(
    st: &mut crate::store::State,
    info: &ResourceInfo,
    version: &str,
    obj: Value,
) -> Result<Arc<Value>> {
    let ns = if info.namespaced {
        Some(crate::machinery::meta::namespace(&obj).to_string()).filter(|n| !n.is_empty())
    } else {
        None
    };
    let ns = ns.or_else(|| info.namespaced.then(|| "default".to_string()));
    let name = crate::machinery::meta::name(&obj).to_string();
    let opts = crate::ops::WriteOptions {
        unconditional: true,
        ..Default::default()
    };
    Ok(crate::ops::update(
        st,
        info,
        version,
        ns.as_deref(),
        &name,
        obj,
        crate::ops::Part::Main,
        &opts,
    )?)
}

/// Seeding: objects written as the API would write them.
impl ApiServer {
    fn info(&self, group: &str, version: &str, plural: &str) -> Result<Arc<ResourceInfo>> {
        self.shared
            .state
            .lock()
            .lookup(group, version, plural)
            .ok_or_else(|| Error::UnknownResource(format!("{plural}.{group}/{version}")))
    }

    /// Creates a typed object directly in the store (as a POST would, without HTTP).
    pub fn create<K>(&self, obj: &K) -> Result<K>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let info = self.info(&K::group(&()), &K::version(&()), &K::plural(&()))?;
        let value = serde_json::to_value(obj)?;
        let stored = self.create_in(&info, &K::version(&()), value)?;
        Ok(serde_json::from_value(stored)?)
    }

    /// The resource and version an object's `apiVersion` and `kind` select.
    fn info_for(&self, obj: &Value) -> Result<(Arc<ResourceInfo>, String)> {
        resolve(&self.shared.state.lock(), obj)
    }

    /// Creates an object given as JSON; its `apiVersion` and `kind` select the resource.
    pub fn create_json(&self, obj: Value) -> Result<Value> {
        let (info, version) = self.info_for(&obj)?;
        self.create_in(&info, &version, obj)
    }

    /// Replaces an object given as JSON, as a PUT would (status kept when the type has a
    /// status subresource). Without `metadata.resourceVersion` the write is unconditional.
    pub fn replace_json(&self, obj: Value) -> Result<Value> {
        let (info, version) = self.info_for(&obj)?;
        let stored = replace_locked(&mut self.shared.state.lock(), &info, &version, obj)?;
        Ok(served(&info, &version, &stored))
    }

    /// Creates many objects given as JSON (each as [`ApiServer::create_json`] would) with
    /// one lock acquisition per few hundred writes and without copying the stored objects
    /// back: the fast way to seed thousands of objects. Stops at the first refused write
    /// (the earlier ones stay) and otherwise returns the global resourceVersion after the
    /// last write.
    pub fn create_many(&self, objs: impl IntoIterator<Item = Value>) -> Result<u64> {
        self.write_many(objs, |st, info, version, obj| {
            create_locked(st, info, version, obj).map(drop)
        })
    }

    /// Replaces many objects given as JSON (each as [`ApiServer::replace_json`] would), in
    /// order, like [`ApiServer::create_many`]: the fast way to produce a storm of watch
    /// events. Returns the global resourceVersion after the last write.
    pub fn replace_many(&self, objs: impl IntoIterator<Item = Value>) -> Result<u64> {
        self.write_many(objs, |st, info, version, obj| {
            replace_locked(st, info, version, obj).map(drop)
        })
    }

    fn write_many(
        &self,
        objs: impl IntoIterator<Item = Value>,
        write: impl Fn(&mut crate::store::State, &ResourceInfo, &str, Value) -> Result<()>,
    ) -> Result<u64> {
        /// Writes per lock acquisition, so that requests and watches interleave.
        const CHUNK: usize = 256;
        let mut objs = objs.into_iter().peekable();
        // The resource of the previous object (batches are usually of one type), valid
        // while the registry version is unchanged.
        let mut last: Option<(u64, String, String, Arc<ResourceInfo>, String)> = None;
        loop {
            let mut st = self.shared.state.lock();
            for _ in 0..CHUNK {
                let Some(obj) = objs.next() else {
                    return Ok(st.rv);
                };
                let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
                let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
                let hit = last.as_ref().is_some_and(|(reg, a, k, _, _)| {
                    *reg == st.registry_version && a == av && k == kind
                });
                if !hit {
                    let (info, version) = resolve(&st, &obj)?;
                    let reg = st.registry_version;
                    last = Some((reg, av.to_string(), kind.to_string(), info, version));
                }
                if let Some((_, _, _, info, version)) = &last {
                    write(&mut st, info, version, obj)?;
                }
            }
            if objs.peek().is_none() {
                return Ok(st.rv);
            }
        }
    }

    /// Replaces a typed object (see [`ApiServer::replace_json`]).
    pub fn replace<K>(&self, obj: &K) -> Result<K>
    where
        K: kube::Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        let mut value = serde_json::to_value(obj)?;
        if let Some(m) = value.as_object_mut() {
            m.insert(
                "apiVersion".into(),
                Value::String(K::api_version(&()).into_owned()),
            );
            m.insert("kind".into(), Value::String(K::kind(&()).into_owned()));
        }
        Ok(serde_json::from_value(self.replace_json(value)?)?)
    }

    /// Deletes an object as a DELETE with default options would (finalizers honoured,
    /// dependents collected in the background). `group` is "" for the core group.
    pub fn delete(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<()> {
        let info = self
            .shared
            .state
            .lock()
            .served_info(&GroupResource::new(group, plural))
            .ok_or_else(|| Error::UnknownResource(format!("{plural}.{group}")))?;
        crate::ops::delete(
            &mut self.shared.state.lock(),
            &info,
            namespace.unwrap_or(""),
            name,
            &crate::ops::DeleteOptions::default(),
        )?;
        Ok(())
    }

    fn create_in(&self, info: &ResourceInfo, version: &str, obj: Value) -> Result<Value> {
        let stored = create_locked(&mut self.shared.state.lock(), info, version, obj)?;
        Ok(served(info, version, &stored))
    }
}
