//! Consistent list reads: latest state, exact past snapshots rebuilt from history,
//! pagination with continue tokens.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use base64::Engine;
use base64::alphabet;
use base64::engine::DecodePaddingMode;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, URL_SAFE_NO_PAD};
use serde_json::{Value, json};

use super::{ObjKey, State, Stored};
use crate::machinery::query::{ListOptions, RvMatch};
use crate::machinery::resource_info::GroupResource;
use crate::machinery::status::{ApiError, ApiResult, Cause};

/// One page of a list.
#[derive(Debug, Clone)]
pub(crate) struct ListPage {
    /// Items in key order.
    pub items: Vec<Stored>,
    /// The snapshot RV (`metadata.resourceVersion` of the list).
    pub rv: u64,
    /// Token for the next page.
    pub continue_token: Option<String>,
    /// Items left after this page (only without selectors).
    pub remaining: Option<u64>,
}

fn key_string(k: &ObjKey) -> String {
    if k.0.is_empty() {
        k.1.clone()
    } else {
        format!("{}/{}", k.0, k.1)
    }
}

fn encode_token(rv: u64, last: &ObjKey) -> String {
    encode_token_raw(i64::try_from(rv).unwrap_or(i64::MAX), last)
}

/// `rv` -1 means "continue from the latest state" (offered when a token expired).
fn encode_token_raw(rv: i64, last: &ObjKey) -> String {
    let doc =
        json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{}\u{0}", key_string(last))});
    URL_SAFE_NO_PAD.encode(doc.to_string())
}

fn bad_token() -> ApiError {
    bad_token_because(None)
}

/// A token that does not decode, with what upstream appends: the base64 or JSON error.
fn bad_token_because(why: Option<String>) -> ApiError {
    let why = why.map(|w| format!(": {w}")).unwrap_or_default();
    ApiError::bad_request(format!(
        "invalid continue token: continue key is not valid{why}"
    ))
}

/// Tokens are read as Go's `RawURLEncoding` reads them: no padding, and bits left over in
/// the last character ignored.
const TOKEN_DECODING: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone),
);

/// Decodes a token into (snapshot rv or None for "latest", last returned key).
fn decode_token(token: &str, namespaced: bool) -> ApiResult<(Option<u64>, ObjKey)> {
    let raw = TOKEN_DECODING
        .decode(token)
        .map_err(|_| bad_token_because(crate::machinery::go_base64::raw_url_decode_error(token)))?;
    let doc: Value = serde_json::from_slice(&raw)
        .map_err(|e| bad_token_because(Some(crate::machinery::go_json::decode_error(&raw, e))))?;
    if doc.get("v").and_then(Value::as_str) != Some("meta.k8s.io/v1") {
        return Err(bad_token());
    }
    let rv = doc
        .get("rv")
        .and_then(Value::as_i64)
        .ok_or_else(bad_token)?;
    let start = doc
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(bad_token)?;
    let start = start.strip_suffix('\u{0}').unwrap_or(start);
    let key = if namespaced {
        let (ns, name) = start.split_once('/').ok_or_else(bad_token)?;
        (ns.to_string(), name.to_string())
    } else {
        (String::new(), start.to_string())
    };
    Ok(((rv >= 0).then_some(rv as u64), key))
}

/// 504 for an RV newer than the server has.
pub(crate) fn too_large(rv: u64, current: u64) -> ApiError {
    let mut e = ApiError::new(
        504,
        "Timeout",
        format!("Too large resource version: {rv}, current: {current}"),
    );
    e.details.causes = vec![Cause {
        reason: "ResourceVersionTooLarge".into(),
        message: "Too large resource version".into(),
        field: String::new(),
    }];
    e.details.retry_after = Some(1);
    e
}

fn too_old() -> ApiError {
    ApiError::expired("The resourceVersion for the provided list is too old.")
}

impl State {
    /// Objects of a resource as they were at `rv` (which must be inside the history window).
    fn snapshot_at(&self, key: &GroupResource, rv: u64) -> BTreeMap<ObjKey, Stored> {
        let Some(rs) = self.resources.get(key) else {
            return BTreeMap::new();
        };
        let mut objects = rs.objects.clone();
        let mut overlay: HashMap<ObjKey, Option<Arc<Value>>> = HashMap::new();
        if let Ok(events) = rs.history.since(rv) {
            for ev in events.iter().rev() {
                let k = (
                    crate::machinery::meta::namespace(&ev.obj).to_string(),
                    crate::machinery::meta::name(&ev.obj).to_string(),
                );
                overlay.insert(k, ev.prev.clone());
            }
        }
        for (k, v) in overlay {
            match v {
                Some(v) => {
                    objects.insert(k, Stored::new(v));
                }
                None => {
                    objects.remove(&k);
                }
            }
        }
        objects
    }

    /// Serves one list request.
    pub(crate) fn list(
        &self,
        key: &GroupResource,
        ns: Option<&str>,
        opts: &ListOptions,
    ) -> ApiResult<ListPage> {
        let rs = self.resources.get(key).ok_or_else(ApiError::unknown_path)?;
        let oldest = rs.oldest_ok();
        let current = self.rv;
        let (snapshot_rv, after) = if let Some(token) = &opts.continue_token {
            let (rv, last) = decode_token(token, rs.info.namespaced)?;
            match rv {
                Some(rv) if rv < oldest => {
                    let mut e = ApiError::expired(
                        "The provided continue parameter is too old to display a consistent list result. \
                         You can start a new list without the continue parameter, or use the continue token \
                         in this response to retrieve the remainder of the results. Continuing with the \
                         provided token results in an inconsistent list - objects that were created, \
                         modified, or deleted between the time the first chunk was returned and now may \
                         show up in the list.",
                    );
                    e.details.list_continue = Some(encode_token_raw(-1, &last));
                    return Err(e);
                }
                Some(rv) if rv > current => return Err(bad_token()),
                Some(rv) => (rv, Some(last)),
                None => (current, Some(last)),
            }
        } else {
            match opts.rv {
                None | Some(0) => (current, None),
                Some(n) => {
                    let exact = opts.rv_match == Some(RvMatch::Exact)
                        || (opts.rv_match.is_none() && opts.limit > 0);
                    if n > current {
                        return Err(too_large(n, current));
                    }
                    if exact {
                        if n < oldest {
                            return Err(too_old());
                        }
                        (n, None)
                    } else {
                        (current, None)
                    }
                }
            }
        };
        let owned;
        let objects = if snapshot_rv == current {
            &rs.objects
        } else {
            owned = self.snapshot_at(key, snapshot_rv);
            &owned
        };
        let mut iter: Box<dyn Iterator<Item = (&ObjKey, &Stored)>> = match (&after, ns) {
            (Some(last), _) => Box::new(objects.range((Bound::Excluded(last), Bound::Unbounded))),
            (None, Some(ns)) => Box::new(objects.range((ns.to_string(), String::new())..)),
            (None, None) => Box::new(objects.iter()),
        };
        // Keys are ordered by namespace first: stop at the first key past the namespace.
        let in_ns = |k: &ObjKey| ns.is_none_or(|n| k.0 == n);
        let past_ns = |k: &ObjKey| ns.is_some_and(|n| k.0.as_str() > n);
        let mut items = Vec::new();
        let mut last_key = None;
        let limit = if opts.limit == 0 {
            usize::MAX
        } else {
            usize::try_from(opts.limit).unwrap_or(usize::MAX)
        };
        let unfiltered = opts.selectors.is_empty();
        let mut more = false;
        let mut remaining = 0u64;
        for (k, v) in iter.by_ref() {
            if past_ns(k) {
                break;
            }
            if !in_ns(k) || !(unfiltered || opts.selectors.matches(&v.obj)) {
                continue;
            }
            if items.len() < limit {
                items.push(v.clone());
                last_key = Some(k.clone());
            } else {
                more = true;
                remaining = 1;
                break;
            }
        }
        if more && unfiltered {
            // Upstream reports how many items are left only for unfiltered lists.
            remaining += iter
                .take_while(|(k, _)| !past_ns(k))
                .filter(|(k, _)| in_ns(k))
                .count() as u64;
        }
        let continue_token = match (more, &last_key) {
            (true, Some(k)) => Some(encode_token(snapshot_rv, k)),
            _ => None,
        };
        Ok(ListPage {
            items,
            rv: snapshot_rv,
            continue_token,
            remaining: (more && opts.selectors.is_empty()).then_some(remaining),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_round_trip() {
        let k = ("ns".to_string(), "a".to_string());
        let t = encode_token(7, &k);
        assert_eq!(decode_token(&t, true).ok(), Some((Some(7), k)));
        assert!(decode_token("!!!", true).is_err());
        assert!(decode_token(&URL_SAFE_NO_PAD.encode("{}"), true).is_err());
    }
}
