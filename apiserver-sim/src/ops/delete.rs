//! DELETE: finalizers, deletionTimestamp, propagation policy, namespaces and CRDs.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::machinery::meta;
use crate::machinery::pointer::text;
use crate::machinery::query::Query;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// Finalizer the garbage collector uses for orphaning dependents.
pub const ORPHAN: &str = "orphan";
/// Finalizer the garbage collector uses for foreground deletion.
pub const FOREGROUND: &str = "foregroundDeletion";
/// Finalizer protecting a CRD until its custom resources are gone.
pub const CRD_CLEANUP: &str = "customresourcecleanup.apiextensions.k8s.io";

/// How dependents are treated when their owner goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Dependents are orphaned (owner references removed).
    Orphan,
    /// The owner stays until its blocking dependents are gone.
    Foreground,
    /// The owner goes now, dependents later.
    Background,
}

/// Decoded `DeleteOptions` (from the body, else the query).
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `propagationPolicy`.
    pub propagation: Option<Propagation>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_rv: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace: Option<i64>,
    /// `dryRun: [All]`.
    pub dry_run: bool,
    /// The client explicitly sent `orphanDependents: false` (upstream then answers 202
    /// when the object is only marked for deletion).
    pub explicit_no_orphan: bool,
}

fn invalid(field: &str, msg: &str) -> ApiError {
    ApiError::invalid_options("DeleteOptions", field, msg)
}

impl DeleteOptions {
    /// Decodes options from a (possibly empty) body, falling back to query parameters.
    pub fn parse(body: &[u8], q: &Query) -> ApiResult<Self> {
        let body_val: Value = if body.iter().all(u8::is_ascii_whitespace) {
            json!({})
        } else {
            serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("failed to decode DeleteOptions: {e}"))
            })?
        };
        if !body_val.is_object() {
            return Err(ApiError::bad_request("DeleteOptions must be a JSON object"));
        }
        let get_str = |k: &str| -> Option<String> {
            body_val
                .get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .or_else(|| q.get(k).map(str::to_string))
        };
        let propagation = match get_str("propagationPolicy").as_deref() {
            None | Some("") => None,
            Some("Orphan") => Some(Propagation::Orphan),
            Some("Foreground") => Some(Propagation::Foreground),
            Some("Background") => Some(Propagation::Background),
            Some(other) => {
                return Err(invalid(
                    "propagationPolicy",
                    &format!(
                        "Unsupported value: {other:?}: supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                    ),
                ));
            }
        };
        let orphan = body_val
            .get("orphanDependents")
            .and_then(Value::as_bool)
            .or_else(|| {
                q.get("orphanDependents")
                    .map(|_| q.flag("orphanDependents"))
            });
        if orphan.is_some() && propagation.is_some() {
            return Err(invalid(
                "propagationPolicy",
                "Invalid value: orphanDependents and propagationPolicy cannot both be set",
            ));
        }
        let propagation = propagation.or(match orphan {
            Some(true) => Some(Propagation::Orphan),
            Some(false) => Some(Propagation::Background),
            None => None,
        });
        let grace = match body_val.get("gracePeriodSeconds") {
            Some(v) => v.as_i64(),
            None => q.uint("gracePeriodSeconds")?.map(|g| g as i64),
        };
        let dry_run = match body_val.get("dryRun") {
            Some(Value::Array(a)) => a.iter().any(|v| v == "All"),
            _ => q.get("dryRun") == Some("All"),
        };
        Ok(Self {
            propagation,
            precondition_uid: body_val
                .pointer("/preconditions/uid")
                .and_then(Value::as_str)
                .map(str::to_string),
            precondition_rv: body_val
                .pointer("/preconditions/resourceVersion")
                .and_then(Value::as_str)
                .map(str::to_string),
            grace,
            dry_run,
            explicit_no_orphan: orphan == Some(false),
        })
    }
}

/// What a delete did.
#[derive(Debug, Clone)]
pub enum Deleted {
    /// The object is gone; this is its final state.
    Removed(Arc<Value>),
    /// The object stays with a deletionTimestamp (finalizers or grace period pending).
    Marked(Arc<Value>),
}

fn is_namespace(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces"
}

/// Namespaces the server refuses to delete.
pub const PROTECTED_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

/// Deletes one object.
pub fn delete(
    st: &mut State,
    info: &ResourceInfo,
    ns: &str,
    name: &str,
    opts: &DeleteOptions,
) -> ApiResult<Deleted> {
    let key = info.key();
    let okey = (
        if info.namespaced {
            ns.to_string()
        } else {
            String::new()
        },
        name.to_string(),
    );
    let Some(old) = st.get(&key, &okey) else {
        return Err(ApiError::not_found(info, name));
    };
    if let Some(uid) = &opts.precondition_uid
        && uid != meta::uid(&old)
    {
        return Err(ApiError::precondition_failed(
            info,
            name,
            &format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({}). The object might have been deleted and then recreated",
                meta::uid(&old)
            ),
        ));
    }
    if let Some(rv) = &opts.precondition_rv
        && rv != meta::resource_version(&old)
    {
        return Err(ApiError::precondition_failed(
            info,
            name,
            &format!(
                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({}). The object might have been modified",
                meta::resource_version(&old)
            ),
        ));
    }
    if is_namespace(info) && PROTECTED_NAMESPACES.contains(&name) {
        return Err(ApiError::forbidden(
            info,
            name,
            "this namespace may not be deleted",
        ));
    }
    if meta::is_deleting(&old) {
        return Ok(Deleted::Marked(old));
    }
    let mut new = (*old).clone();
    let mut fins = meta::finalizers(&new);
    match opts.propagation {
        Some(Propagation::Orphan) => {
            fins.retain(|f| f != FOREGROUND);
            if !fins.iter().any(|f| f == ORPHAN) {
                fins.push(ORPHAN.into());
            }
        }
        Some(Propagation::Foreground) => {
            fins.retain(|f| f != ORPHAN);
            if !fins.iter().any(|f| f == FOREGROUND) {
                fins.push(FOREGROUND.into());
            }
        }
        Some(Propagation::Background) => fins.retain(|f| f != ORPHAN && f != FOREGROUND),
        None => {}
    }
    if info.group == "apiextensions.k8s.io" && !fins.iter().any(|f| f == CRD_CLEANUP) {
        fins.push(CRD_CLEANUP.into());
    }
    meta::set_finalizers(&mut new, fins.clone());
    let pod_grace = pod_grace_period(info, &new, opts.grace);
    let keep = !fins.is_empty() || is_namespace(info) || pod_grace.is_some();
    if !keep {
        if opts.dry_run {
            return Ok(Deleted::Removed(old));
        }
        return st
            .remove(&key, &okey)
            .map(Deleted::Removed)
            .ok_or_else(|| ApiError::not_found(info, name));
    }
    let grace = pod_grace.unwrap_or(0);
    let when = jiff::Timestamp::now()
        .checked_add(jiff::SignedDuration::from_secs(grace))
        .unwrap_or_else(|_| jiff::Timestamp::now());
    let md = meta::metadata_mut(&mut new);
    md.insert(
        "deletionTimestamp".into(),
        Value::String(when.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
    );
    md.insert("deletionGracePeriodSeconds".into(), json!(grace));
    if let Some(g) = md.get("generation").and_then(Value::as_i64)
        && g > 0
    {
        md.insert("generation".into(), json!(g + 1));
    }
    if is_namespace(info)
        && let Some(m) = new.as_object_mut()
    {
        m.insert("status".into(), json!({"phase": "Terminating"}));
    }
    if opts.dry_run {
        return Ok(Deleted::Marked(Arc::new(new)));
    }
    Ok(Deleted::Marked(st.put(&key, new)))
}

/// Pods bound to a node and still running are deleted gracefully: Some(grace seconds > 0).
fn pod_grace_period(info: &ResourceInfo, pod: &Value, requested: Option<i64>) -> Option<i64> {
    if !(info.group.is_empty() && info.plural == "pods") {
        return None;
    }
    let bound = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    let phase = text(pod, "/status/phase");
    if !bound || phase == "Succeeded" || phase == "Failed" {
        return None;
    }
    let grace = requested
        .or_else(|| {
            pod.pointer("/spec/terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
        })
        .unwrap_or(30);
    (grace > 0).then_some(grace)
}
