//! Content negotiation of responses (upstream `negotiation.NegotiateOutputMediaType`): the
//! `Accept` clauses are tried by preference (`q`), each against the media types the server
//! encodes (JSON, YAML, protobuf); a clause's `as`/`g`/`v` parameters ask for a conversion,
//! and a clause asking for one this endpoint cannot make is skipped. When no clause is
//! acceptable the answer is 406 `NotAcceptable`.
//!
//! The outcome is a representation ([`Repr`]) and an encoding ([`Format`]): protobuf when
//! the clause is protobuf and the resource has a protobuf form (built-in kinds of the
//! descriptors), JSON otherwise. A YAML clause is answered in JSON (the `Accept` pre-check
//! of the front end already refuses requests that allow no JSON at all); a `Table` is
//! JSON or YAML only.

use super::format::{Format, SUPPORTED, SUPPORTED_WITHOUT_PROTOBUF};
use super::repr::{Repr, TableVersion};
use crate::machinery::status::{ApiError, ApiResult};

/// The subtype of `application/vnd.kubernetes.protobuf`.
const PROTOBUF_SUBTYPE: &str = "vnd.kubernetes.protobuf";

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

/// The representation a clause asks of one serializer, if this endpoint can produce it;
/// `protobuf` when the resource has a protobuf form.
fn accept(c: &Clause, sub: &str, streams: bool, protobuf: bool) -> Option<Repr> {
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
    if sub == PROTOBUF_SUBTYPE && !protobuf {
        // Custom resources and kinds the descriptors lack are JSON and YAML only.
        return None;
    }
    if kind.is_none() && group.is_none() && version.is_none() {
        return Some(Repr::Full);
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

/// Picks the representation and encoding of a resource response from an `Accept` header;
/// `protobuf` when the resource has a protobuf form (a built-in kind of the descriptors).
pub fn negotiate(header: Option<&str>, protobuf: bool) -> ApiResult<(Repr, Format)> {
    let Some(header) = header.filter(|h| !h.trim().is_empty()) else {
        return Ok((Repr::Full, Format::Json));
    };
    for c in parse(header) {
        for (ty, sub, streams) in SERIALIZERS {
            let matches =
                (c.ty == *ty && (c.sub == *sub || c.sub == "*")) || (c.ty == "*" && c.sub == "*");
            if matches && let Some(r) = accept(&c, sub, *streams, protobuf) {
                let format = if *sub == PROTOBUF_SUBTYPE {
                    Format::Protobuf
                } else {
                    Format::Json
                };
                return Ok((r, format));
            }
        }
    }
    let supported = if protobuf {
        SUPPORTED
    } else {
        SUPPORTED_WITHOUT_PROTOBUF
    };
    Err(ApiError::new(
        406,
        "NotAcceptable",
        format!("only the following media types are accepted: {supported}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBECTL: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

    fn n(h: &str) -> ApiResult<Repr> {
        negotiate(Some(h), true).map(|(r, _)| r)
    }

    #[test]
    fn accept_selects_representation() {
        assert_eq!(negotiate(None, true), Ok((Repr::Full, Format::Json)));
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
            negotiate(
                Some(
                    "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json"
                ),
                true
            ),
            Ok((Repr::Full, Format::Json))
        );
    }

    #[test]
    fn protobuf_only_for_resources_with_a_protobuf_form() {
        // client-go's typed clients.
        let typed = Some("application/vnd.kubernetes.protobuf,application/json");
        assert_eq!(negotiate(typed, true), Ok((Repr::Full, Format::Protobuf)));
        assert_eq!(negotiate(typed, false), Ok((Repr::Full, Format::Json)));
        // client-go's metadata clients.
        let metadata = Some(
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,\
             application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        );
        assert_eq!(
            negotiate(metadata, true),
            Ok((Repr::Metadata, Format::Protobuf))
        );
        assert_eq!(
            negotiate(metadata, false),
            Ok((Repr::Metadata, Format::Json))
        );
        assert_eq!(
            negotiate(Some("application/json, */*"), true),
            Ok((Repr::Full, Format::Json))
        );
        // Without a protobuf form, a protobuf-only Accept is refused, and the 406 does
        // not offer protobuf.
        let only = Some("application/vnd.kubernetes.protobuf");
        let e = negotiate(only, false).unwrap_err();
        assert_eq!(e.code, 406);
        assert!(
            e.message.ends_with(SUPPORTED_WITHOUT_PROTOBUF),
            "{}",
            e.message
        );
        let e = negotiate(Some("text/plain"), true).unwrap_err();
        assert!(e.message.ends_with(SUPPORTED), "{}", e.message);
    }
}
