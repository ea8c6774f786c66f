//! Writes to a type whose served form differs from its stored form (events.k8s.io events,
//! autoscaling/v1 horizontal pod autoscalers): the body is checked against the served
//! type, converted to its stored form, and written through the type that stores it.

use std::sync::Arc;

use serde_json::Value;

use super::validate;
use crate::api::status::{ApiError, ApiResult};
use crate::kinds::resource_info::ResourceInfo;
use crate::store::State;

/// What a write goes through: the body in its stored form, the type that stores it and its
/// storage version (`Ok`), or, for types without a conversion, the body as it came
/// (`Err`, written as it is).
pub(super) type Converted = Result<(Arc<ResourceInfo>, String, Value), Value>;

/// Converts a body to its stored form when its type has a conversion.
pub(super) fn into_stored(
    st: &State,
    info: &ResourceInfo,
    version: &str,
    mut obj: Value,
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
    let store = st
        .resource(&info.key())
        .map(|r| r.info.clone())
        .ok_or_else(ApiError::unknown_path)?;
    let stored = info.to_stored(version, obj);
    let storage_version = store.storage_version().to_string();
    Ok(Ok((store, storage_version, stored)))
}
