//! Server-side apply and field ownership (`metadata.managedFields`), as kube-apiserver
//! keeps them with structured-merge-diff.
//!
//! Every tracked write records which field manager owns which fields: an `Update` entry
//! for create, update and non-apply patches ([`record_update`]), an `Apply` entry for
//! server-side apply ([`apply`]), which merges the applied configuration by the type's list
//! and map rules and refuses (409) to change fields other managers own unless forced.
//!
//! - [`fieldpath`]: path elements (`f:`, `k:`, `v:`, `i:`) and their order;
//! - [`set`]: sets of paths and their `FieldsV1` encoding;
//! - [`schema`] and [`merge_rules`]: the merge rules of each value (list types, keys,
//!   atomic maps), from the built-in table or the CRD's structural schema;
//! - [`typed`]: field sets of values, comparisons, checks of an applied configuration;
//! - [`merge`]: merging and removing paths;
//! - [`managed_fields`]: `managedFields` entries on the wire;
//! - [`last_applied`]: kubectl's client-side apply annotation under server-side apply;
//! - [`updater`]: ownership changes of an update and of an apply;
//! - [`conflicts`]: the 409 of a refused apply.

mod conflicts;
mod fieldpath;
mod last_applied;
mod managed_fields;
mod merge;
mod merge_rules;
mod schema;
mod set;
mod typed;
mod updater;

use serde_json::{Map, Value};

pub(crate) use managed_fields::manager_from_user_agent;
use managed_fields::{ManagerId, Operation};
pub(crate) use set::FieldSet;
use updater::{Scope, Write};

use crate::machinery::meta;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};

/// Who makes a tracked write, and through which subresource.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Writer<'a> {
    /// The field manager (already defaulted from the `User-Agent`).
    pub manager: &'a str,
    /// `status`, `scale`, or empty for the main resource.
    pub subresource: &'a str,
    /// Fields mutating admission added to the request: upstream records ownership before
    /// admission runs, so the writer does not own them (nor does anyone else).
    pub added_by_admission: Option<&'a FieldSet>,
}

/// The fields `after` has that `before` lacks (what a mutating webhook added to a request),
/// in `info`'s `version`.
pub(crate) fn fields_added(
    info: &ResourceInfo,
    version: &str,
    before: &Value,
    after: &Value,
) -> FieldSet {
    typed::compare(Some(before), Some(after), schema::root(info, version)).added
}

fn scope(info: &ResourceInfo, subresource: &str) -> Scope {
    match subresource {
        "status" => Scope::StatusOnly,
        _ if info.status_subresource => Scope::NoStatus,
        _ => Scope::All,
    }
}

fn managed_fields_of(obj: &Value) -> Option<&Value> {
    meta::field(obj, "managedFields")
}

fn set_managed_fields(obj: &mut Value, managers: &managed_fields::Managers) {
    let md = meta::metadata_mut(obj);
    match managed_fields::encode(managers) {
        Some(entries) => md.insert("managedFields".into(), entries),
        None => md.remove("managedFields"),
    };
}

/// Records the ownership a non-apply write takes, in `new.metadata.managedFields`.
///
/// The request's own `managedFields` are kept when they are valid entries (a client may
/// edit them), dropped when they ask for a reset (`[]` or `[{}]`), and otherwise (absent,
/// invalid, or on a subresource) replaced by the live object's. An object with no entries
/// is not tracked by updates until it is created or applied to, as upstream.
pub(crate) fn record_update(
    info: &ResourceInfo,
    version: &str,
    writer: Writer<'_>,
    live: Option<&Value>,
    new: &mut Value,
) {
    let sent = meta::metadata_mut(new).remove("managedFields");
    let from_live = || managed_fields::decode(live.and_then(managed_fields_of)).unwrap_or_default();
    let managers = if !writer.subresource.is_empty() {
        from_live()
    } else if managed_fields::is_reset(sent.as_ref()) {
        Default::default()
    } else {
        match managed_fields::decode(sent.as_ref()) {
            Ok(m) if !m.is_empty() => m,
            _ => from_live(),
        }
    };
    if managers.is_empty() && live.is_some() {
        return;
    }
    let api_version = info.api_version(version);
    let now = meta::now_rfc3339();
    let w = Write {
        ty: schema::root(info, version),
        scope: scope(info, writer.subresource),
        id: ManagerId::new(
            writer.manager,
            Operation::Update,
            &api_version,
            writer.subresource,
        ),
        api_version: &api_version,
        now: &now,
    };
    let mut managers = updater::update(&w, live, new, managers);
    if let Some(added) = writer.added_by_admission
        && let Some(mine) = managers.get_mut(&w.id)
    {
        mine.set = mine.set.difference(added);
        if mine.set.is_empty() {
            managers.remove(&w.id);
        }
    }
    set_managed_fields(new, &managers);
}

/// Parses an apply body: JSON or YAML holding one object (`null` is an empty object).
pub(crate) fn decode_config(body: &[u8]) -> ApiResult<Value> {
    // Upstream reads an applied configuration as YAML (JSON is YAML) and words its errors so.
    let parsed = match serde_json::from_slice::<Value>(body) {
        Ok(v) => v,
        Err(_) => crate::api::yaml11::to_json(body).map_err(|e| {
            ApiError::bad_request(format!(
                "error decoding YAML: error converting YAML to JSON: {e}"
            ))
        })?,
    };
    let kind = match &parsed {
        Value::Object(_) => return Ok(parsed),
        Value::Null => return Ok(Value::Object(Map::new())),
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
    };
    Err(ApiError::bad_request(format!(
        "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    )))
}

/// `group/version, Kind=kind`, as a GroupVersionKind prints.
fn gvk_of(obj: &Value) -> String {
    let text = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or("");
    let (group, version) = text("apiVersion")
        .split_once('/')
        .unwrap_or(("", text("apiVersion")));
    format!("{group}/{version}, Kind={}", text("kind"))
}

/// Checks an applied configuration before it is merged: its `apiVersion` and `kind` are the
/// endpoint's (400), it has no `managedFields` (400), and it fits the type's schema (500,
/// as upstream answers a configuration it cannot type).
pub(crate) fn check_config(info: &ResourceInfo, version: &str, config: &Value) -> ApiResult<()> {
    let expected = format!("{}/{version}, Kind={}", info.group, info.kind);
    let got = gvk_of(config);
    if got != expected {
        return Err(ApiError::bad_request(format!("invalid object type: {got}")));
    }
    if managed_fields_of(config).is_some_and(Value::is_array) {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    typed::validate(config, schema::root(info, version)).map_err(|e| {
        ApiError::new(
            500,
            "",
            format!(
                "failed to create typed patch object ({}/{}; {got}): {e}",
                meta::namespace(config),
                meta::name(config)
            ),
        )
    })
}

/// Applies `config` for `writer` to `live` (absent: the object is created): the new
/// object with its `managedFields`, or the 409 listing the conflicting fields.
pub(crate) fn apply(
    info: &ResourceInfo,
    version: &str,
    writer: Writer<'_>,
    force: bool,
    live: Option<&Value>,
    config: &Value,
) -> ApiResult<Value> {
    let api_version = info.api_version(version);
    let now = meta::now_rfc3339();
    let ty = schema::root(info, version);
    let scope = scope(info, writer.subresource);
    let write = |manager: &str, operation| Write {
        ty,
        scope,
        id: ManagerId::new(manager, operation, &api_version, writer.subresource),
        api_version: &api_version,
        now: &now,
    };
    let empty = Value::Object(Map::new());
    // Entries no server would have written (a seeded object's) count as none.
    let mut managers = managed_fields::decode(live.and_then(managed_fields_of)).unwrap_or_default();
    if managers.is_empty()
        && let Some(live) = live
    {
        // An object nobody owns yet: what it holds is owned by "before-first-apply".
        let before = write("before-first-apply", Operation::Update);
        managers = updater::update(&before, Some(&empty), live, managers);
    }
    let w = write(writer.manager, Operation::Apply);
    let base = live.unwrap_or(&empty);
    let (mut obj, managers) = match updater::apply(&w, base, config, managers.clone(), force) {
        Ok(done) => done,
        Err(found) if writer.manager == last_applied::KUBECTL => {
            // kubectl moving from client-side apply: fields its annotation holds are its own.
            let Some(allowed) = last_applied::allowed_conflicts(base, &api_version, ty) else {
                return Err(conflicts::conflict_error(&found));
            };
            let rest: updater::Conflicts = found
                .into_iter()
                .map(|(id, set)| (id, set.difference(&allowed)))
                .filter(|(_, set)| !set.is_empty())
                .collect();
            if !rest.is_empty() {
                return Err(conflicts::conflict_error(&rest));
            }
            updater::apply(&w, base, config, managers, true)
                .map_err(|c| conflicts::conflict_error(&c))?
        }
        Err(found) => return Err(conflicts::conflict_error(&found)),
    };
    if writer.manager == last_applied::KUBECTL {
        last_applied::refresh(&mut obj, config);
    }
    set_managed_fields(&mut obj, &managers);
    Ok(obj)
}

#[cfg(test)]
mod tests;
