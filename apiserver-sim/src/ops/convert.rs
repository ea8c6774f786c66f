//! Writes to a type whose served form differs from its stored form (events.k8s.io events,
//! autoscaling/v1 horizontal pod autoscalers): the body is checked against the served
//! type, its field ownership is recorded in the served version (as upstream records it:
//! an events.k8s.io write owns events.k8s.io paths), then it is converted to its stored
//! form and written through the type that stores it.

use std::sync::Arc;

use serde_json::Value;

use super::validate;
use super::{Ownership, WriteOptions};
use crate::machinery::meta;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// A write in its stored form: the type that stores it, its storage version, the object,
/// and the write's options (ownership already settled).
pub(super) struct StoredWrite {
    /// The type whose store holds the object.
    pub info: Arc<ResourceInfo>,
    /// Its storage version.
    pub version: String,
    /// The object in its stored form.
    pub obj: Value,
    /// The write's options.
    pub opts: WriteOptions,
}

/// What a write goes through: a [`StoredWrite`] (`Ok`), or, for types without a
/// conversion, the body as it came (`Err`, written as it is).
pub(super) type Converted = Result<StoredWrite, Value>;

/// Converts a body to its stored form when its type has a conversion. `name` is the object
/// an update replaces (None for a create): its live state is what ownership is recorded
/// against.
pub(super) fn into_stored(
    st: &State,
    info: &ResourceInfo,
    version: &str,
    url_ns: Option<&str>,
    name: Option<&str>,
    mut obj: Value,
    opts: &WriteOptions,
) -> ApiResult<Converted> {
    if info.conversion.is_none() {
        return Ok(Err(obj));
    }
    validate::type_meta(info, version, &mut obj)?;
    if let Some(m) = obj.as_object_mut() {
        m.insert(
            "apiVersion".into(),
            Value::String(info.api_version(version)),
        );
    }
    validate::typed(info, version, &obj)?;
    let mut opts = opts.clone();
    if opts.ownership == Ownership::Record {
        let live = name.and_then(|name| {
            let ns = url_ns.unwrap_or_else(|| meta::namespace(&obj));
            let okey = (ns.to_string(), name.to_string());
            st.get(&info.key_ref(), &okey)
        });
        let live = live.map(|l| info.to_served(version, &l));
        crate::api::apply::record_update(info, version, opts.writer(), live.as_ref(), &mut obj);
        opts.ownership = Ownership::Settled;
    }
    let store = st
        .resource(&info.key())
        .map(|r| r.info.clone())
        .ok_or_else(ApiError::unknown_path)?;
    let stored = info.to_stored(version, obj);
    let storage_version = store.storage_version().to_string();
    Ok(Ok(StoredWrite {
        info: store,
        version: storage_version,
        obj: stored,
        opts,
    }))
}
