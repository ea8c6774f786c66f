//! What the simulated controllers share: the resources they work on, reading a resource's
//! objects, controller references, pod state, and writes made through the normal write path
//! under a component's field-manager name (so watchers see ADDED/MODIFIED/DELETED and
//! `managedFields` names the writer, as on a cluster).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::machinery::meta;
pub(super) use crate::machinery::pointer::{int, text};
use crate::machinery::resource_info::{GroupResourceRef, ResourceInfo};
use crate::ops::{DeleteOptions, Part};
use crate::ops::{Ownership, WriteOptions};
use crate::store::{ObjKey, State};

/// apps/v1 deployments.
pub(super) const DEPLOYMENTS: GroupResourceRef<'static> =
    GroupResourceRef::new("apps", "deployments");
/// apps/v1 replicasets.
pub(super) const REPLICASETS: GroupResourceRef<'static> =
    GroupResourceRef::new("apps", "replicasets");
/// core/v1 pods.
pub(super) const PODS: GroupResourceRef<'static> = GroupResourceRef::new("", "pods");
/// batch/v1 jobs.
pub(super) const JOBS: GroupResourceRef<'static> = GroupResourceRef::new("batch", "jobs");
/// core/v1 services.
pub(super) const SERVICES: GroupResourceRef<'static> = GroupResourceRef::new("", "services");
/// core/v1 endpoints.
pub(super) const ENDPOINTS: GroupResourceRef<'static> = GroupResourceRef::new("", "endpoints");
/// discovery.k8s.io/v1 endpointslices.
pub(super) const ENDPOINT_SLICES: GroupResourceRef<'static> =
    GroupResourceRef::new("discovery.k8s.io", "endpointslices");
/// core/v1 nodes.
pub(super) const NODES: GroupResourceRef<'static> = GroupResourceRef::new("", "nodes");

/// Every object of a resource (empty when it is not served).
pub(super) fn list(st: &State, gr: GroupResourceRef<'_>) -> Vec<Arc<Value>> {
    st.resource(&gr)
        .map(|rs| rs.objects.values().map(|s| s.obj.clone()).collect())
        .unwrap_or_default()
}

/// The key of an object in its resource.
pub(super) fn key_of(obj: &Value) -> ObjKey {
    (
        meta::namespace(obj).to_string(),
        meta::name(obj).to_string(),
    )
}

/// The uid of the object's controller (the owner reference with `controller: true`).
pub(super) fn controller_uid(obj: &Value) -> Option<&str> {
    meta::owner_refs(obj)
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
}

/// Objects grouped by the uid of their controller.
pub(super) fn by_controller(objs: &[Arc<Value>]) -> HashMap<&str, Vec<&Arc<Value>>> {
    let mut out: HashMap<&str, Vec<&Arc<Value>>> = HashMap::new();
    for o in objs {
        if let Some(uid) = controller_uid(o) {
            out.entry(uid).or_default().push(o);
        }
    }
    out
}

/// The owner reference a controller puts on what it creates.
pub(super) fn controller_ref(owner: &Value, api_version: &str, kind: &str) -> Value {
    json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": meta::name(owner),
        "uid": meta::uid(owner),
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// One annotation of an object.
pub(super) fn annotation<'a>(obj: &'a Value, key: &str) -> Option<&'a str> {
    meta::field(obj, "annotations")
        .and_then(|a| a.get(key))
        .and_then(Value::as_str)
}

/// The condition of `cond_type` in `status.conditions`.
pub(super) fn condition<'a>(obj: &'a Value, cond_type: &str) -> Option<&'a Map<String, Value>> {
    obj.pointer("/status/conditions")
        .and_then(Value::as_array)?
        .iter()
        .filter_map(Value::as_object)
        .find(|c| c.get("type").and_then(Value::as_str) == Some(cond_type))
}

/// Whether the condition `cond_type` has status True.
pub(super) fn condition_true(obj: &Value, cond_type: &str) -> bool {
    condition(obj, cond_type)
        .is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"))
}

/// A pod's phase.
pub(super) fn phase(pod: &Value) -> &str {
    text(pod, "/status/phase")
}

/// A pod that finished (Succeeded or Failed).
pub(super) fn terminal(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

/// A pod a ReplicaSet or Job counts: neither finished nor being deleted.
pub(super) fn active(pod: &Value) -> bool {
    !terminal(pod) && !meta::is_deleting(pod)
}

/// The served type of a resource.
fn info(st: &State, gr: GroupResourceRef<'_>) -> Option<Arc<ResourceInfo>> {
    st.resource(&gr).map(|r| r.info.clone())
}

/// Write options of a component writing through the API (its name is the field manager).
fn opts(manager: &str, subresource: &'static str) -> WriteOptions {
    WriteOptions {
        field_manager: manager.to_string(),
        ownership: Ownership::Record,
        subresource,
        ..Default::default()
    }
}

/// Why a simulated controller's write was refused: logged at debug level (a namespace being
/// deleted refuses creates, which the controllers simply retry on their next pass).
fn refused(what: &str, obj: &Value, e: &crate::machinery::status::ApiError) {
    tracing::debug!(namespace = meta::namespace(obj), name = meta::name(obj),
        code = e.code, message = %e.message, "workload simulator: {what} refused");
}

/// Creates an object as `manager`; the stored object, or None when refused.
pub(super) fn create(
    st: &mut State,
    gr: GroupResourceRef<'_>,
    manager: &str,
    obj: Value,
) -> Option<Arc<Value>> {
    let info = info(st, gr)?;
    let ns = meta::namespace(&obj).to_string();
    let ns = (!ns.is_empty()).then_some(ns);
    match crate::ops::create(
        st,
        &info,
        "v1",
        ns.as_deref(),
        obj.clone(),
        &opts(manager, ""),
    ) {
        Ok(created) => Some(created),
        Err(e) => {
            refused("create", &obj, &e);
            None
        }
    }
}

/// Writes `new` (a modified copy of a stored object, its resourceVersion kept) as `manager`,
/// the whole object or only its status; true if written.
pub(super) fn update(
    st: &mut State,
    gr: GroupResourceRef<'_>,
    manager: &str,
    new: Value,
    part: Part,
) -> bool {
    let Some(info) = info(st, gr) else {
        return false;
    };
    let (ns, name) = key_of(&new);
    let ns = (!ns.is_empty()).then_some(ns);
    let sub = if part == Part::Status { "status" } else { "" };
    let result = crate::ops::update(
        st,
        &info,
        "v1",
        ns.as_deref(),
        &name,
        new.clone(),
        part,
        &opts(manager, sub),
    );
    match result {
        Ok(_) => true,
        Err(e) => {
            refused("update", &new, &e);
            false
        }
    }
}

/// Replaces the status of a stored object when it differs; true if written.
pub(super) fn write_status(
    st: &mut State,
    gr: GroupResourceRef<'_>,
    manager: &str,
    obj: &Value,
    status: Value,
) -> bool {
    if obj.get("status") == Some(&status) {
        return false;
    }
    let mut new = obj.clone();
    if let Some(m) = new.as_object_mut() {
        m.insert("status".into(), status);
    }
    update(st, gr, manager, new, Part::Status)
}

/// Makes the object `want` stored: created when there is no `current`, written when it
/// differs from it; true if written.
pub(super) fn upsert(
    st: &mut State,
    gr: GroupResourceRef<'_>,
    manager: &str,
    current: Option<&Arc<Value>>,
    want: Value,
) -> bool {
    match current {
        Some(cur) if **cur == want => false,
        Some(_) => update(st, gr, manager, want, Part::Main),
        None => create(st, gr, manager, want).is_some(),
    }
}

/// Deletes an object with the default options (a running pod gets its grace period);
/// true if it changed.
pub(super) fn delete(st: &mut State, gr: GroupResourceRef<'_>, obj: &Value) -> bool {
    let Some(info) = info(st, gr) else {
        return false;
    };
    let (ns, name) = key_of(obj);
    match crate::ops::delete(st, &info, &ns, &name, &DeleteOptions::default()) {
        Ok(_) => true,
        Err(e) => {
            refused("delete", obj, &e);
            false
        }
    }
}
