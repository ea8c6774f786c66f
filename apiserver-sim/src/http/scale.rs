//! The scale subresource: an object's replicas and selector seen as an `autoscaling/v1`
//! `Scale`, at the paths its type declares.

use http::Response;
use serde_json::{Value, json};

use super::request::{Req, okey};
use super::respond::Body;
use crate::machinery::meta;
use crate::machinery::resource_info::{ResourceInfo, ScalePaths};
use crate::machinery::selector::LabelSelector;
use crate::machinery::status::{ApiError, ApiResult};
use crate::ops::WriteOptions;
use crate::ops::{self, Part};
use crate::shared::Shared;

fn selector_string(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(sel @ Value::Object(_)) => LabelSelector::from_object(sel)
            .map(|s| s.to_string())
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// The `autoscaling/v1` `Scale` of an object.
pub(super) fn scale_of(info: &ResourceInfo, obj: &Value) -> Value {
    let paths = info.scale.clone().unwrap_or(ScalePaths {
        spec_replicas: ".spec.replicas".into(),
        status_replicas: ".status.replicas".into(),
        label_selector: None,
    });
    let spec = obj
        .pointer(&ScalePaths::pointer(&paths.spec_replicas))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let status = obj
        .pointer(&ScalePaths::pointer(&paths.status_replicas))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = selector_string(
        paths
            .label_selector
            .as_deref()
            .and_then(|p| obj.pointer(&ScalePaths::pointer(p))),
    );
    let mut md = json!({"name": meta::name(obj), "uid": meta::uid(obj),
        "resourceVersion": meta::resource_version(obj)});
    for f in ["namespace", "creationTimestamp"] {
        if let Some(v) = obj.pointer(&format!("/metadata/{f}")) {
            md[f] = v.clone();
        }
    }
    let mut status_doc = json!({"replicas": status});
    if !selector.is_empty() {
        status_doc["selector"] = json!(selector);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": md,
           "spec": {"replicas": spec}, "status": status_doc})
}

/// kube-apiserver's validation of a `Scale` (`ValidateScale`): replicas may not be negative.
fn negative_replicas(name: &str, replicas: i64) -> ApiError {
    let message = format!("Invalid value: {replicas}: must be greater than or equal to 0");
    let cause = crate::machinery::status::Cause::typed("spec.replicas", &message);
    ApiError::invalid_kind("autoscaling", "Scale", name, vec![cause])
}

/// Sets the object's replicas from a `Scale` (PUT or PATCH of `/scale`) and answers with the
/// new `Scale`.
pub(super) fn write_scale(
    shared: &Shared,
    req: &Req,
    scale: Value,
    wo: &WriteOptions,
) -> ApiResult<Response<Body>> {
    let name = req.name.unwrap_or("");
    let replicas = scale
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .ok_or_else(|| {
            ApiError::invalid(
                &req.info,
                name,
                vec![crate::machinery::status::required("spec.replicas", "")],
            )
        })?;
    if replicas < 0 {
        return Err(negative_replicas(name, replicas));
    }
    let paths = req.info.scale.clone().ok_or_else(ApiError::unknown_path)?;
    let mut st = shared.state.lock();
    let current = st
        .get(&req.info.key(), &okey(req))
        .ok_or_else(|| ApiError::not_found(&req.info, name))?;
    let scale_rv = meta::resource_version(&scale);
    if !scale_rv.is_empty() && scale_rv != meta::resource_version(&current) {
        return Err(ApiError::conflict(&req.info, name));
    }
    let mut new = (*current).clone();
    let ptr = ScalePaths::pointer(&paths.spec_replicas);
    if let Some(slot) = new.pointer_mut(&ptr) {
        *slot = json!(replicas);
    } else {
        let mut doc = json!(replicas);
        for part in ptr.trim_start_matches('/').rsplit('/') {
            doc = json!({ part: doc });
        }
        crate::api::patch::merge_patch(&mut new, &doc);
    }
    let stored = ops::update(
        &mut st,
        &req.info,
        req.info.storage_version(),
        req.ns,
        name,
        new,
        Part::Main,
        wo,
    )?;
    drop(st);
    Ok(super::wire::value(200, req, &scale_of(&req.info, &stored)))
}
