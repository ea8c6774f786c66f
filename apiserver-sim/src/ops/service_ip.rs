//! Cluster IPs of Services, as the Service registry gives them on create: a Service of type
//! ClusterIP, NodePort or LoadBalancer gets a free address of the service range
//! 10.96.0.0/12 (or the one it asks for, unless another Service holds it: 422), `clusterIPs`,
//! `ipFamilies` and `ipFamilyPolicy`; a headless one (`clusterIP: None`) keeps `None`. An
//! update that leaves them out keeps them. An address is free again once its Service is
//! deleted.

use std::collections::HashSet;
use std::net::Ipv4Addr;

use serde_json::{Value, json};

use crate::machinery::meta;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult, invalid_value};
use crate::store::State;

/// The first address of the service range (10.96.0.0).
const BASE: u32 = 0x0A60_0000;
/// Addresses in the range (a /12).
const SIZE: u32 = 1 << 20;

/// The cluster IPs held by stored Services.
fn in_use(st: &State, info: &ResourceInfo) -> HashSet<Ipv4Addr> {
    st.resource(&info.key_ref())
        .into_iter()
        .flat_map(|rs| rs.objects.values())
        .filter_map(|s| s.obj.pointer("/spec/clusterIP").and_then(Value::as_str))
        .filter_map(|ip| ip.parse().ok())
        .collect()
}

/// A free address, dynamic ones taken at random from the upper part of the range (the
/// lower sixteenth is left to Services that ask for an address).
fn free(used: &HashSet<Ipv4Addr>) -> Option<Ipv4Addr> {
    let low = SIZE / 16;
    let span = SIZE - 1 - low;
    let start = fastrand::u32(0..span);
    (0..span)
        .map(|i| Ipv4Addr::from(BASE + low + (start + i) % span))
        .find(|ip| !used.contains(ip))
}

/// Gives a new Service its cluster IP (see the module documentation).
pub(super) fn allocate(st: &State, info: &ResourceInfo, obj: &mut Value) -> ApiResult<()> {
    if !(info.builtin && info.group.is_empty() && info.plural == "services") {
        return Ok(());
    }
    let name = meta::name(obj).to_string();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if ty == "ExternalName" {
        return Ok(());
    }
    let requested = spec
        .get("clusterIP")
        .and_then(Value::as_str)
        .filter(|ip| !ip.is_empty())
        .or_else(|| {
            spec.get("clusterIPs")
                .and_then(|ips| ips.get(0))
                .and_then(Value::as_str)
        })
        .filter(|ip| !ip.is_empty())
        .map(str::to_string);
    let ip = match requested {
        Some(none) if none == "None" => none,
        Some(ip) => {
            let taken = ip
                .parse::<Ipv4Addr>()
                .is_ok_and(|addr| in_use(st, info).contains(&addr));
            if taken {
                return Err(ApiError::invalid(
                    info,
                    &name,
                    vec![invalid_value(
                        "spec.clusterIPs",
                        &format!("[\"{ip}\"]"),
                        &format!("failed to allocate IP {ip}: provided IP is already allocated"),
                    )],
                ));
            }
            ip
        }
        None => match free(&in_use(st, info)) {
            Some(ip) => ip.to_string(),
            None => {
                return Err(ApiError::new(
                    500,
                    "InternalError",
                    "Internal error occurred: failed to allocate a serviceIP: range is full",
                ));
            }
        },
    };
    spec.insert("clusterIP".into(), json!(ip));
    spec.insert("clusterIPs".into(), json!([ip]));
    spec.entry("ipFamilies").or_insert_with(|| json!(["IPv4"]));
    spec.entry("ipFamilyPolicy")
        .or_insert_with(|| json!("SingleStack"));
    Ok(())
}

/// The allocated fields an update of a Service leaves out are kept from the stored one.
pub(super) fn keep_on_update(info: &ResourceInfo, old: &Value, new: &mut Value) {
    if !(info.builtin && info.group.is_empty() && info.plural == "services") {
        return;
    }
    let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
        return;
    }
    for field in ["clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"] {
        let missing = spec
            .get(field)
            .is_none_or(|v| v.is_null() || v == "" || v.as_array().is_some_and(Vec::is_empty));
        if missing && let Some(v) = old.pointer(&format!("/spec/{field}")) {
            spec.insert(field.into(), v.clone());
        }
    }
}
