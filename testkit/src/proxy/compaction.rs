//! Compaction on demand, played by the proxy: a real server compacts its history on its own
//! schedule (etcd's), so after [`FaultProxy::compact`](super::FaultProxy::compact) the proxy
//! answers what a server compacted at that resourceVersion answers — for the requests whose
//! answer compaction changes, in the simulator's words (which are kube-apiserver's):
//!
//! - a watch from an older resourceVersion: HTTP 200 and one `ERROR` event, 410 Expired
//!   `too old resource version: <rv> (<compacted>)`;
//! - an exact list at an older resourceVersion (`resourceVersionMatch=Exact`, or a
//!   resourceVersion with a `limit` and no match rule): 410 Expired;
//! - a continue token from an older list: 410 Expired, offering an inconsistent continue
//!   token as upstream does.
//!
//! Everything else goes to the server.

use apiserver_sim::ApiError;
use base64::Engine;
use base64::alphabet;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use serde_json::{Value, json};

use super::classify::{Classified, query_value};

/// Continue tokens read as Go's `RawURLEncoding` reads them.
const TOKEN: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_decode_allow_trailing_bits(true)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone),
);

/// The error compaction at `compacted` gives the request, if any, and whether it goes in band
/// (a watch).
pub(crate) fn expired(
    compacted: u64,
    request: &Classified,
    query: Option<&str>,
) -> Option<(ApiError, bool)> {
    let rv = query_value(query, "resourceVersion").and_then(|rv| rv.parse::<u64>().ok());
    match request.verb {
        "watch" => {
            let initial_events = query_value(query, "sendInitialEvents")
                .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
            let rv = rv.filter(|rv| *rv != 0 && *rv < compacted && !initial_events)?;
            let e = ApiError::expired(format!("too old resource version: {rv} ({compacted})"));
            Some((e, true))
        }
        "list" => {
            if let Some(token) = query_value(query, "continue").filter(|t| !t.is_empty()) {
                return expired_token(compacted, &token).map(|e| (e, false));
            }
            let exact = match query_value(query, "resourceVersionMatch").as_deref() {
                Some("Exact") => true,
                None | Some("") => query_value(query, "limit")
                    .and_then(|l| l.parse::<u64>().ok())
                    .is_some_and(|l| l > 0),
                Some(_) => false,
            };
            rv.filter(|rv| exact && *rv != 0 && *rv < compacted)?;
            let e = ApiError::expired("The resourceVersion for the provided list is too old.");
            Some((e, false))
        }
        _ => None,
    }
}

/// The 410 for a continue token of a list at a resourceVersion older than `compacted`.
fn expired_token(compacted: u64, token: &str) -> Option<ApiError> {
    let doc: Value = serde_json::from_slice(&TOKEN.decode(token).ok()?).ok()?;
    let rv = doc.get("rv").and_then(Value::as_i64)?;
    if rv < 0 || rv as u64 >= compacted {
        return None;
    }
    let mut e = ApiError::expired(
        "The provided continue parameter is too old to display a consistent list result. \
         You can start a new list without the continue parameter, or use the continue token \
         in this response to retrieve the remainder of the results. Continuing with the \
         provided token results in an inconsistent list - objects that were created, \
         modified, or deleted between the time the first chunk was returned and now may \
         show up in the list.",
    );
    let inconsistent = json!({"v": "meta.k8s.io/v1", "rv": -1, "start": doc.get("start")});
    e.details.list_continue = Some(URL_SAFE_NO_PAD.encode(inconsistent.to_string()));
    Some(e)
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::super::classify::classify;
    use super::*;

    fn answer(path_and_query: &str) -> Option<(u16, bool)> {
        let (path, query) = path_and_query
            .split_once('?')
            .map_or((path_and_query, None), |(p, q)| (p, Some(q)));
        let request = classify(&Method::GET, path, query).unwrap();
        expired(100, &request, query).map(|(e, in_band)| (e.code, in_band))
    }

    fn token(rv: i64) -> String {
        URL_SAFE_NO_PAD
            .encode(json!({"v": "meta.k8s.io/v1", "rv": rv, "start": "a/b\u{0}"}).to_string())
    }

    #[test]
    fn what_a_compacted_server_refuses() {
        let cms = "/api/v1/namespaces/a/configmaps";
        assert_eq!(
            answer(&format!("{cms}?watch=1&resourceVersion=99")),
            Some((410, true))
        );
        assert_eq!(answer(&format!("{cms}?watch=1&resourceVersion=100")), None);
        assert_eq!(answer(&format!("{cms}?watch=1&resourceVersion=0")), None);
        assert_eq!(answer(&format!("{cms}?watch=1")), None);
        assert_eq!(
            answer(&format!(
                "{cms}?watch=1&resourceVersion=5&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
            )),
            None
        );
        assert_eq!(
            answer(&format!(
                "{cms}?resourceVersion=5&resourceVersionMatch=Exact"
            )),
            Some((410, false))
        );
        assert_eq!(
            answer(&format!("{cms}?resourceVersion=5&limit=10")),
            Some((410, false))
        );
        assert_eq!(answer(&format!("{cms}?resourceVersion=5")), None);
        assert_eq!(
            answer(&format!(
                "{cms}?resourceVersion=5&resourceVersionMatch=NotOlderThan&limit=1"
            )),
            None
        );
        assert_eq!(
            answer(&format!("{cms}?limit=1&continue={}", token(50))),
            Some((410, false))
        );
        assert_eq!(
            answer(&format!("{cms}?limit=1&continue={}", token(100))),
            None
        );
        assert_eq!(answer(&format!("{cms}?limit=1&continue=not-a-token")), None);
        assert_eq!(answer(&format!("{cms}/x?resourceVersion=5")), None);
    }
}
