//! A resource request resolved: its verb, subresource and target, and the request counts
//! kept per verb and resource.

use std::sync::Arc;

use http::Method;

use crate::api::format::Format;
use crate::api::repr::Repr;
use crate::api::route::ResourcePath;
use crate::machinery::query::Query;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};
use crate::ops::{OwnerRefsAdmission, Part};
use crate::shared::Shared;

/// What a resource request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Verb {
    /// The verb as counted and matched by fault rules (`deletecollection`, ...).
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// The subresource a request addresses (`finalize` of a namespace counts as the object).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sub {
    None,
    Status,
    Scale,
    /// A pod's `ephemeralcontainers`.
    EphemeralContainers,
    /// A pod's `resize`.
    Resize,
}

impl Sub {
    /// The part of the object a write to this subresource may change (scale writes are handled
    /// on their own, through the main object's replicas).
    pub(super) fn part(self) -> Part {
        match self {
            Sub::Status => Part::Status,
            Sub::EphemeralContainers => Part::EphemeralContainers,
            Sub::Resize => Part::Resize,
            Sub::None | Sub::Scale => Part::Main,
        }
    }

    /// The subresource's name, as `managedFields` and admission requests carry it.
    pub(super) fn name(self) -> &'static str {
        match self {
            Sub::None => "",
            Sub::Status => "status",
            Sub::Scale => "scale",
            Sub::EphemeralContainers => "ephemeralcontainers",
            Sub::Resize => "resize",
        }
    }
}

/// A resolved request.
pub(super) struct Req<'a> {
    pub info: Arc<ResourceInfo>,
    pub version: &'a str,
    pub ns: Option<&'a str>,
    pub name: Option<&'a str>,
    pub sub: Sub,
    pub query: &'a Query,
    pub repr: Repr,
    /// The negotiated response encoding.
    pub format: Format,
    /// Who writes, when `OwnerReferencesPermissionEnforcement` is on (RBAC on and the plugin
    /// enabled): their owner-reference changes are checked.
    pub owner_refs: Option<OwnerRefsAdmission>,
}

/// Counts a request in [`Shared::requests`] under its verb and plural (`<plural>/<sub>` for a
/// subresource), before anything can fail it.
pub(crate) fn count(shared: &Shared, method: &Method, rp: &ResourcePath, q: &Query) {
    let Ok(verb) = verb_of(method, rp, q) else {
        return;
    };
    match &rp.subresource {
        None => shared.requests.record(verb.as_str(), &rp.plural),
        Some(sub) => shared
            .requests
            .record(verb.as_str(), &format!("{}/{sub}", rp.plural)),
    }
}

fn verb_of(method: &Method, rp: &ResourcePath, q: &Query) -> ApiResult<Verb> {
    Ok(match (rp.name.is_some(), method.as_str()) {
        (false, "GET") if rp.legacy_watch || q.flag("watch") => Verb::Watch,
        (false, "GET") => Verb::List,
        (false, "POST") => Verb::Create,
        (false, "DELETE") => Verb::DeleteCollection,
        (true, "GET") if rp.legacy_watch || q.flag("watch") => Verb::Watch,
        (true, "GET") => Verb::Get,
        (true, "PUT") => Verb::Update,
        (true, "PATCH") => Verb::Patch,
        (true, "DELETE") => Verb::Delete,
        _ => return Err(ApiError::method_not_allowed()),
    })
}

pub(super) fn verb_for(
    method: &Method,
    rp: &ResourcePath,
    q: &Query,
    all_ns: bool,
) -> ApiResult<Verb> {
    let v = verb_of(method, rp, q)?;
    if all_ns && !matches!(v, Verb::List | Verb::Watch) {
        return Err(ApiError::method_not_allowed());
    }
    Ok(v)
}

/// The namespace and name the request addresses, as a store key.
pub(super) fn okey(req: &Req) -> (String, String) {
    (
        req.ns.unwrap_or("").to_string(),
        req.name.unwrap_or("").to_string(),
    )
}
