//! Content negotiation of responses (upstream `negotiation.NegotiateOutputMediaType`): the
//! `Accept` clauses are tried by preference (`q`), each against the media types the server
//! encodes (JSON, YAML, protobuf); a clause's `as`/`g`/`v` parameters ask for a conversion,
//! and a clause asking for one this endpoint cannot make is skipped. When no clause is
//! acceptable the answer is 406 `NotAcceptable`.
//!
//! The simulator encodes every answer as JSON: a YAML or protobuf clause it accepts is
//! answered in JSON (the `Accept` pre-check of the front end already refuses requests that
//! allow no JSON at all).

use super::repr::{Repr, TableVersion};
use super::status::{ApiError, ApiResult};

/// The media types a real server lists in a 406 answer.
pub const SUPPORTED: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// The serializers, in the order upstream tries them: (type, subtype, streams watches).
const SERIALIZERS: &[(&str, &str, bool)] = &[
    ("application", "json", true),
    ("application", "yaml", false),
    ("application", "vnd.kubernetes.protobuf", true),
];

/// One media range of an `Accept` header.
struct Clause<'a> {
    ty: &'a str,
    sub: &'a str,
    q: f64,
    params: Vec<(&'a str, &'a str)>,
}

fn parse(header: &str) -> Vec<Clause<'_>> {
    let mut out: Vec<Clause> = header
        .split(',')
        .filter_map(|part| {
            let mut pieces = part.split(';').map(str::trim);
            let (ty, sub) = pieces.next()?.split_once('/')?;
            let mut q = 1.0;
            let mut params = Vec::new();
            for p in pieces {
                let Some((k, v)) = p.split_once('=') else {
                    continue;
                };
                let (k, v) = (k.trim(), v.trim());
                if k == "q" {
                    q = v.parse().unwrap_or(0.0);
                } else {
                    params.push((k, v));
                }
            }
            Some(Clause {
                ty: ty.trim(),
                sub: sub.trim(),
                q,
                params,
            })
        })
        .collect();
    // Preference first, then specific types before wildcards (stable otherwise).
    out.sort_by(|a, b| {
        b.q.partial_cmp(&a.q)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then((a.ty == "*").cmp(&(b.ty == "*")))
            .then((a.sub == "*").cmp(&(b.sub == "*")))
    });
    out
}

/// The representation a clause asks of one serializer, if this endpoint can produce it.
fn accept(c: &Clause, sub: &str, streams: bool, builtin: bool) -> Option<Repr> {
    let (mut kind, mut group, mut version) = (None, None, None);
    for (k, v) in &c.params {
        match *k {
            "as" => kind = Some(*v),
            "g" => group = Some(*v),
            "v" => version = Some(*v),
            "stream" if !v.is_empty() && (!streams || *v != "watch") => return None,
            "sv" if !v.is_empty() => return None,
            _ => {}
        }
    }
    if kind.is_none() && group.is_none() && version.is_none() {
        // Custom resources are served in JSON and YAML only.
        return (builtin || sub != "vnd.kubernetes.protobuf").then_some(Repr::Full);
    }
    if group != Some("meta.k8s.io") {
        return None;
    }
    match (kind.unwrap_or(""), version.unwrap_or("")) {
        ("Table", "v1") if sub == "json" || sub == "yaml" => Some(Repr::Table(TableVersion::V1)),
        ("Table", "v1beta1") if sub == "json" || sub == "yaml" => {
            Some(Repr::Table(TableVersion::V1beta1))
        }
        ("PartialObjectMetadata" | "PartialObjectMetadataList", "v1") => Some(Repr::Metadata),
        _ => None,
    }
}

/// Picks the representation of a resource response from an `Accept` header; `builtin`
/// tells a built-in type (also served as protobuf) from a custom resource.
pub fn negotiate(header: Option<&str>, builtin: bool) -> ApiResult<Repr> {
    let Some(header) = header.filter(|h| !h.trim().is_empty()) else {
        return Ok(Repr::Full);
    };
    for c in parse(header) {
        for (ty, sub, streams) in SERIALIZERS {
            let matches =
                (c.ty == *ty && (c.sub == *sub || c.sub == "*")) || (c.ty == "*" && c.sub == "*");
            if matches && let Some(r) = accept(&c, sub, *streams, builtin) {
                return Ok(r);
            }
        }
    }
    Err(ApiError::new(
        406,
        "NotAcceptable",
        format!("only the following media types are accepted: {SUPPORTED}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECTL: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

    fn n(h: &str) -> ApiResult<Repr> {
        negotiate(Some(h), true)
    }

    #[test]
    fn accept_selects_representation() {
        assert_eq!(negotiate(None, true), Ok(Repr::Full));
        assert_eq!(n("application/json"), Ok(Repr::Full));
        assert_eq!(n("*/*"), Ok(Repr::Full));
        assert_eq!(
            n("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"),
            Ok(Repr::Metadata)
        );
        assert_eq!(n(KUBECTL), Ok(Repr::Table(TableVersion::V1)));
        assert_eq!(
            n("application/json;as=Table;v=v1beta1;g=meta.k8s.io"),
            Ok(Repr::Table(TableVersion::V1beta1))
        );
        // Unknown conversions are skipped in favour of a later clause, or refused.
        assert_eq!(
            n("application/json;as=Foo;v=v1;g=meta.k8s.io,application/json"),
            Ok(Repr::Full)
        );
        assert_eq!(
            n("application/json;as=Table;v=v2;g=meta.k8s.io").map_err(|e| e.code),
            Err(406)
        );
        assert_eq!(
            n("application/json;as=Table;v=v1;g=example.com").map_err(|e| e.code),
            Err(406)
        );
        // Preference order wins over position.
        assert_eq!(
            n("application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io"),
            Ok(Repr::Table(TableVersion::V1))
        );
        // A table is JSON or YAML, never protobuf.
        assert_eq!(
            n("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json"),
            Ok(Repr::Full)
        );
        assert_eq!(
            negotiate(Some("application/vnd.kubernetes.protobuf"), false).map_err(|e| e.code),
            Err(406)
        );
    }
}
