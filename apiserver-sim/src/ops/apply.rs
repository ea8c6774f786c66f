//! Server-side apply (`PATCH` with `application/apply-patch+yaml`) under the store lock:
//! the applied configuration is checked, merged into the live object by
//! [`crate::api::apply`] (which also settles field ownership and conflicts), and the result
//! goes through [`super::create`] (the object did not exist) or [`super::update`] like any
//! other write, so validation, status handling and dry runs are the same.

use std::sync::Arc;

use serde_json::Value;

use super::create::create;
use super::update::{Part, update};
use super::{Ownership, WriteOptions};
use crate::api::apply::{self, Writer};
use crate::machinery::meta;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// Result of a PATCH: the object, and whether it was created (server-side apply only).
pub struct Patched {
    /// The stored (or dry-run) object.
    pub obj: Arc<Value>,
    /// True when an apply patch created the object (reply 201).
    pub created: bool,
}

/// The merged object must keep the name on the URL.
fn check_name(obj: &Value, url_name: &str) -> ApiResult<()> {
    match meta::name(obj) {
        "" => Err(ApiError::bad_request(format!(
            "the name of the object ({url_name} based on URL) was undeterminable: name must be provided"
        ))),
        n if n != url_name => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({url_name})"
        ))),
        _ => Ok(()),
    }
}

/// Applies `config` to the object `name` (creating it when it does not exist and the main
/// resource is addressed) for `opts.field_manager`, forcing conflicts with `opts.force`.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    st: &mut State,
    info: &ResourceInfo,
    version: &str,
    ns: Option<&str>,
    name: &str,
    config: &Value,
    part: Part,
    opts: &WriteOptions,
) -> ApiResult<Patched> {
    apply::check_config(info, version, config)?;
    let okey = (ns.unwrap_or("").to_string(), name.to_string());
    let live = st.get(&info.key(), &okey);
    if live.is_none() && part != Part::Main {
        return Err(ApiError::not_found(info, name));
    }
    // Merged and owned in the served form (events.k8s.io events are stored as core ones).
    let live = match live {
        Some(l) if !info.as_stored(version) => Some(Arc::new(info.to_served(version, &l))),
        l => l,
    };
    let writer = Writer {
        added_by_admission: None,
        ..opts.writer()
    };
    let merged = apply::apply(info, version, writer, opts.force, live.as_deref(), config)?;
    check_name(&merged, name)?;
    // Ownership is settled: the write stores the entries computed here.
    let settled = WriteOptions {
        ownership: Ownership::Settled,
        ..opts.clone()
    };
    match live {
        None => {
            let obj = create(st, info, version, ns, merged, &settled)?;
            Ok(Patched { obj, created: true })
        }
        Some(_) => {
            let obj = update(st, info, version, ns, name, merged, part, &settled)?;
            Ok(Patched {
                obj,
                created: false,
            })
        }
    }
}
