//! The write operations, as pure in-memory steps on [`State`]: each runs entirely under
//! the store lock, so a read-modify-write (PATCH) never races another writer.

mod apply;
mod convert;
mod create;
mod decode_check;
mod delete;
mod job_update;
mod options;
mod owner_refs;
mod pod_parts;
mod service_ip;
mod template_rules;
mod update;
pub(crate) mod validate;
mod workload_status;

use serde_json::Value;

pub use apply::{Patched, apply};
pub use create::create;
pub use delete::{CRD_CLEANUP, DeleteOptions, Deleted, FOREGROUND, ORPHAN, Propagation, delete};
pub use options::{FieldValidation, Ownership, WriteOptions};
pub(crate) use owner_refs::OwnerRefsAdmission;
pub(crate) use update::graceless;
pub use update::{Part, update};

use crate::api::patch::PatchKind;
use crate::kinds::patch_strategies;
use crate::machinery::meta;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// Applies a patch to the stored object and writes the result through [`update`]; a
/// server-side apply goes to [`apply`].
#[allow(clippy::too_many_arguments)]
pub fn patch(
    st: &mut State,
    info: &ResourceInfo,
    version: &str,
    ns: Option<&str>,
    name: &str,
    kind: PatchKind,
    patch: &Value,
    part: Part,
    opts: &WriteOptions,
) -> ApiResult<Patched> {
    if kind == PatchKind::Apply {
        return apply(st, info, version, ns, name, patch, part, opts);
    }
    let okey = (ns.unwrap_or("").to_string(), name.to_string());
    let Some(old) = st.get(&info.key(), &okey) else {
        return Err(ApiError::not_found(info, name));
    };
    let merged = patched(info, version, &info.to_served(version, &old), kind, patch)?;
    let obj = update(st, info, version, ns, name, merged, part, opts)?;
    Ok(Patched {
        obj,
        created: false,
    })
}

/// The object a patch makes of `old` (already in its served form at `version`, as a client
/// of that version sees it); it carries `old`'s resourceVersion unless the patch sets one.
pub fn patched(
    info: &ResourceInfo,
    version: &str,
    old: &Value,
    kind: PatchKind,
    patch: &Value,
) -> ApiResult<Value> {
    let mut base = old.clone();
    if let Some(m) = base.as_object_mut() {
        m.insert(
            "apiVersion".into(),
            Value::String(info.api_version(version)),
        );
    }
    let shape = info
        .builtin
        .then(|| patch_strategies::root(&info.group, version, &info.kind))
        .flatten();
    let mut merged = crate::api::patch::apply(kind, &base, patch, shape)?;
    if meta::resource_version(&merged).is_empty() {
        meta::set_str(&mut merged, "resourceVersion", meta::resource_version(old));
    }
    Ok(merged)
}
