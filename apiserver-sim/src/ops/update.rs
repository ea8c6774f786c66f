//! PUT (and the second half of PATCH): replace an object or its status.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Ownership, WriteOptions};
use super::{owner_refs, validate};
use crate::machinery::meta;
use crate::machinery::resource_info::{GenerationRule, ResourceInfo};
use crate::machinery::status::{ApiError, ApiResult, invalid_value};
use crate::store::State;

/// Which part of the object a write may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The main resource (status kept from storage when a status subresource exists).
    Main,
    /// The `/status` subresource (only `.status` taken from the body).
    Status,
    /// A pod's `/ephemeralcontainers` (only `spec.ephemeralContainers` taken from the body).
    EphemeralContainers,
    /// A pod's `/resize` (only its containers' `resources` and `resizePolicy` taken).
    Resize,
}

fn without(v: &Value, keys: &[&str]) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.as_object_mut() {
        for k in keys {
            m.remove(*k);
        }
    }
    v
}

/// Metadata fields only the server sets: a write keeps the stored values.
const SERVER_FIELDS: [&str; 6] = [
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "resourceVersion",
    "generation",
];

/// Gives `new` the server-owned metadata fields of `old` (and removes those `old` lacks),
/// reading `old`'s metadata in one pass: it is the coldest memory a write touches.
fn keep_server_fields(old: &Value, new: &mut Value) {
    let old_md = old.get("metadata").and_then(Value::as_object);
    let md = meta::metadata_mut(new);
    let mut kept = [false; SERVER_FIELDS.len()];
    for (k, v) in old_md.into_iter().flatten() {
        let Some(slot) = SERVER_FIELDS
            .iter()
            .zip(kept.iter_mut())
            .find_map(|(f, slot)| (f == k).then_some(slot))
        else {
            continue;
        };
        *slot = true;
        if md.get(k) != Some(v) {
            md.insert(k.clone(), v.clone());
        }
    }
    for (f, kept) in SERVER_FIELDS.iter().zip(kept) {
        if !kept {
            md.remove(*f);
        }
    }
}

/// The generation the new object should carry.
fn next_generation(info: &ResourceInfo, old: &Value, new: &Value) -> Option<i64> {
    if info.generation == GenerationRule::None {
        return None;
    }
    let current = meta::generation(old);
    let changed = match info.generation {
        GenerationRule::None => return None,
        GenerationRule::Spec => old.get("spec") != new.get("spec"),
        GenerationRule::AllButMetadata => {
            let mut skip = vec!["metadata", "apiVersion", "kind"];
            if info.status_subresource {
                skip.push("status");
            }
            without(old, &skip) != without(new, &skip)
        }
    };
    Some(if changed {
        current.max(0) + 1
    } else {
        current.max(1)
    })
}

/// Replaces an object (or its status) after the usual checks. `body` is the full new object.
#[allow(clippy::too_many_arguments)]
pub fn update(
    st: &mut State,
    info: &ResourceInfo,
    version: &str,
    url_ns: Option<&str>,
    name: &str,
    body: Value,
    part: Part,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    match super::convert::into_stored(st, info, version, url_ns, Some(name), body, opts)? {
        Ok(w) => update_stored(st, &w.info, &w.version, url_ns, name, w.obj, part, &w.opts),
        Err(body) => update_stored(st, info, version, url_ns, name, body, part, opts),
    }
}

/// [`update`] with a body in its stored form.
#[allow(clippy::too_many_arguments)]
fn update_stored(
    st: &mut State,
    info: &ResourceInfo,
    version: &str,
    url_ns: Option<&str>,
    name: &str,
    mut body: Value,
    part: Part,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    validate::type_meta(info, version, &mut body)?;
    validate::prune(info, version, &mut body, opts.field_validation)?;
    validate::omit_empty_metadata(&mut body);
    validate::name_and_namespace(info, url_ns, Some(name), &mut body)?;
    let ns = meta::namespace(&body).to_string();
    validate::namespace_writable(st, info, &ns, None)?;
    let key = info.key_ref();
    let okey = (ns, name.to_string());
    let Some(old) = st.get(&key, &okey) else {
        return Err(ApiError::not_found(info, name));
    };
    let body_rv = meta::resource_version(&body);
    if body_rv.is_empty() {
        if !info.builtin && !opts.unconditional {
            return Err(ApiError::invalid(
                info,
                name,
                vec![invalid_value(
                    "metadata.resourceVersion",
                    "0x0",
                    "must be specified for an update",
                )],
            ));
        }
    } else if body_rv != meta::resource_version(&old) {
        return Err(ApiError::conflict(info, name));
    }
    let body_uid = meta::uid(&body);
    if !body_uid.is_empty() && body_uid != meta::uid(&old) {
        return Err(ApiError::conflict_msg(
            info,
            name,
            &format!(
                "Precondition failed: UID in precondition: {body_uid}, UID in object meta: {}",
                meta::uid(&old)
            ),
        ));
    }
    // What the request asked for, as upstream's field manager sees it: before a pod
    // subresource's strategy drops what that subresource does not write.
    let asked = matches!(part, Part::EphemeralContainers | Part::Resize).then(|| body.clone());
    let mut new = match part {
        Part::Status => {
            let mut n = (*old).clone();
            if let Some(m) = n.as_object_mut() {
                match body.get("status") {
                    Some(s) => m.insert("status".into(), s.clone()),
                    None => m.remove("status"),
                };
            }
            // The ownership a status write computed is kept with its status.
            match meta::field(&body, "managedFields") {
                Some(mf) => {
                    let mf = mf.clone();
                    meta::metadata_mut(&mut n).insert("managedFields".into(), mf);
                }
                None if opts.ownership == Ownership::Settled => {
                    meta::metadata_mut(&mut n).remove("managedFields");
                }
                None => {}
            }
            n
        }
        Part::EphemeralContainers | Part::Resize => {
            let mut n = if part == Part::Resize {
                super::pod_parts::with_resized_containers(&old, &body)
            } else {
                super::pod_parts::with_ephemeral_containers(&old, &body)
            };
            // As for a status write, the ownership this write computed is kept with it.
            if let Some(mf) = meta::field(&body, "managedFields") {
                let mf = mf.clone();
                meta::metadata_mut(&mut n).insert("managedFields".into(), mf);
            }
            n
        }
        Part::Main => {
            let mut n = body;
            if info.status_subresource
                && let Some(m) = n.as_object_mut()
            {
                match old.get("status") {
                    Some(s) => m.insert("status".into(), s.clone()),
                    None => m.remove("status"),
                };
            }
            if crate::machinery::meta::field(&old, "deletionTimestamp").is_none()
                && crate::machinery::meta::field(&n, "deletionTimestamp").is_some()
            {
                return Err(ApiError::invalid(
                    info,
                    name,
                    vec![invalid_value(
                        "metadata.deletionTimestamp",
                        "",
                        "field is immutable; may only be set by the server",
                    )],
                ));
            }
            n
        }
    };
    crate::kinds::schema::apply_defaults(info, version, &mut new);
    super::create::merge_string_data(info, &mut new);
    super::service_ip::keep_on_update(info, &old, &mut new);
    keep_server_fields(&old, &mut new);
    if part != Part::Status {
        if let Some(g) = next_generation(info, &old, &new) {
            meta::metadata_mut(&mut new).insert("generation".into(), json!(g));
        }
        let mut causes = validate::object(info, &new);
        causes.extend(super::template_rules::update(info, &old, &new));
        if part == Part::EphemeralContainers {
            causes.extend(super::pod_parts::ephemeral_container_changes(&old, &new));
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid(info, name, causes));
        }
        validate::typed(info, version, &new)?;
    } else if info.builtin {
        let causes = super::workload_status::validate(info, &new);
        if !causes.is_empty() {
            return Err(ApiError::invalid(info, name, causes));
        }
        validate::typed(info, version, &new)?;
    } else {
        let causes = crate::kinds::schema::validate(info, &new);
        if !causes.is_empty() {
            return Err(ApiError::invalid(info, name, causes));
        }
    }
    if let Some(admission) = &opts.owner_refs {
        let written = owner_refs::Written {
            info,
            namespace: &okey.0,
            name,
            subresource: opts.subresource,
        };
        admission.admit(st, &written, &new, Some(&old))?;
    }
    let deleting = meta::is_deleting(&old);
    if deleting {
        let before = meta::finalizers(&old);
        if meta::finalizers(&new).iter().any(|f| !before.contains(f)) {
            return Err(ApiError::invalid(
                info,
                name,
                vec![invalid_value(
                    "metadata.finalizers",
                    "",
                    "no new finalizers can be added if the object is being deleted",
                )],
            ));
        }
    }
    match asked {
        Some(mut asked) if opts.ownership == Ownership::Record => {
            // The writer owns what it asked to change, kept or not (as upstream records it).
            crate::kinds::schema::apply_defaults(info, version, &mut asked);
            keep_server_fields(&old, &mut asked);
            track(info, version, &old, &mut asked, opts);
            if let Some(mf) = meta::field(&asked, "managedFields").cloned() {
                meta::metadata_mut(&mut new).insert("managedFields".into(), mf);
            }
        }
        _ => track(info, version, &old, &mut new, opts),
    }
    if new == *old {
        return Ok(old);
    }
    if opts.dry_run {
        return Ok(Arc::new(new));
    }
    // Namespaces are finalized by the namespace controller once their content is gone.
    let is_namespace = info.group.is_empty() && info.plural == "namespaces";
    if deleting && !is_namespace && meta::finalizers(&new).is_empty() && graceless(&new) {
        st.remove(&key, &okey);
        return Ok(Arc::new(new));
    }
    Ok(st.put_at(&key, okey, new))
}

/// Field ownership of the write: recorded for API requests; an untracked write (seed,
/// controller) keeps the `managedFields` it brings, or the live object's.
fn track(info: &ResourceInfo, version: &str, old: &Value, new: &mut Value, opts: &WriteOptions) {
    if opts.ownership == Ownership::Record {
        crate::api::apply::record_update(info, version, opts.writer(), Some(old), new);
    } else if opts.ownership == Ownership::Keep
        && meta::field(new, "managedFields").is_none()
        && let Some(mf) = meta::field(old, "managedFields")
    {
        meta::metadata_mut(new).insert("managedFields".into(), mf.clone());
    }
}

/// A deleting object whose grace period is over (0 or unset) may be removed.
pub(crate) fn graceless(obj: &Value) -> bool {
    crate::machinery::meta::field(obj, "deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        .is_none_or(|g| g == 0)
}
