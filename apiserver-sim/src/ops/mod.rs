//! The write operations, as pure in-memory steps on [`State`]: each runs entirely under
//! the store lock, so a read-modify-write (PATCH) never races another writer.

mod convert;
mod create;
mod delete;
mod update;
pub(crate) mod validate;

use std::sync::Arc;

use serde_json::Value;

pub use create::create;
pub use delete::{CRD_CLEANUP, DeleteOptions, Deleted, FOREGROUND, ORPHAN, Propagation, delete};
pub(crate) use update::graceless;
pub use update::{Part, update};

use crate::api::meta;
use crate::api::patch::PatchKind;
use crate::api::query::WriteOptions;
use crate::api::status::{ApiError, ApiResult};
use crate::kinds::resource_info::ResourceInfo;
use crate::store::State;

/// Result of a PATCH: the object, and whether it was created (server-side apply only).
pub struct Patched {
    /// The stored (or dry-run) object.
    pub obj: Arc<Value>,
    /// True when an apply patch created the object (reply 201).
    pub created: bool,
}

/// Applies a patch to the stored object and writes the result through [`update`].
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
    let okey = (ns.unwrap_or("").to_string(), name.to_string());
    let Some(old) = st.get(&info.key(), &okey) else {
        if kind == PatchKind::Apply && part == Part::Main {
            let mut body = patch.clone();
            if meta::name(&body).is_empty() {
                meta::set_str(&mut body, "name", name);
            }
            if meta::name(&body) != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({}) does not match the name on the URL ({name})",
                    meta::name(&body)
                )));
            }
            let obj = create(st, info, version, ns, body, opts)?;
            return Ok(Patched { obj, created: true });
        }
        return Err(ApiError::not_found(info, name));
    };
    let base = info.to_served(version, &old);
    let mut merged = crate::api::patch::apply(kind, &base, patch, info.builtin)?;
    if meta::resource_version(&merged).is_empty() {
        meta::set_str(&mut merged, "resourceVersion", meta::resource_version(&old));
    }
    let obj = update(st, info, version, ns, name, merged, part, opts)?;
    Ok(Patched {
        obj,
        created: false,
    })
}
