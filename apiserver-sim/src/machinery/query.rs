//! Query-string parsing and validation of list, watch and write options.

use std::collections::HashMap;

use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::selector::{FieldSelector, LabelSelector, Selectors};
use crate::machinery::status::{ApiError, ApiResult, Cause};

/// Decoded query parameters (last value wins).
#[derive(Debug, Clone, Default)]
pub struct Query(HashMap<String, String>);

impl Query {
    /// Parses a raw (form-urlencoded) query string; a bare `?` is fine.
    pub fn parse(raw: Option<&str>) -> Self {
        let mut map = HashMap::new();
        if let Some(raw) = raw {
            for (k, v) in form_urlencoded::parse(raw.as_bytes()) {
                map.insert(k.into_owned(), v.into_owned());
            }
        }
        Self(map)
    }

    /// A parameter's value.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Kubernetes boolean semantics: present and not `false`/`0` is true.
    pub fn flag(&self, key: &str) -> bool {
        match self.get(key) {
            None => false,
            Some(v) => !(v.eq_ignore_ascii_case("false") || v == "0"),
        }
    }

    /// An optional non-negative integer; a bad value is 400.
    pub fn uint(&self, key: &str) -> ApiResult<Option<u64>> {
        match self.get(key) {
            None | Some("") => Ok(None),
            Some(v) => v.parse::<u64>().map(Some).map_err(|_| {
                ApiError::bad_request(format!("invalid value {v:?} for query parameter {key}"))
            }),
        }
    }
}

/// `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RvMatch {
    /// `NotOlderThan`.
    NotOlderThan,
    /// `Exact`.
    Exact,
}

/// Parses a resourceVersion string: `None` for unset/empty, 400 when not a number.
pub fn parse_rv(v: Option<&str>) -> ApiResult<Option<u64>> {
    parse_rv_field(v).map_err(|e| ApiError::bad_request(format!("invalid resource version: {e}")))
}

/// A resourceVersion as upstream parses it (Go's `strconv.ParseUint`: digits only), the error
/// worded as its field error.
fn parse_rv_field(v: Option<&str>) -> Result<Option<u64>, String> {
    let Some(s) = v.filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    let why = if !s.bytes().all(|b| b.is_ascii_digit()) {
        "invalid syntax"
    } else {
        match s.parse::<u64>() {
            Ok(rv) => return Ok(Some(rv)),
            Err(_) => "value out of range",
        }
    };
    Err(format!(
        "resourceVersion: Invalid value: {s:?}: strconv.ParseUint: parsing {s:?}: {why}"
    ))
}

/// Options of a list, watch or deletecollection.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// Label and field selectors.
    pub selectors: Selectors,
    /// `resourceVersion` (None when unset).
    pub rv: Option<u64>,
    /// `resourceVersionMatch`.
    pub rv_match: Option<RvMatch>,
    /// `limit` (0 = none).
    pub limit: u64,
    /// `continue`.
    pub continue_token: Option<String>,
    /// `allowWatchBookmarks`.
    pub bookmarks: bool,
    /// `sendInitialEvents` (None when absent).
    pub send_initial_events: Option<bool>,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u64>,
}

impl ListOptions {
    /// Parses and validates list/watch options for a resource.
    pub fn parse(q: &Query, info: &ResourceInfo) -> ApiResult<Self> {
        let labels = LabelSelector::parse(q.get("labelSelector").unwrap_or(""))?;
        let fields = FieldSelector::parse(
            q.get("fieldSelector").unwrap_or(""),
            &info.group,
            &info.plural,
        )?;
        let watch = q.flag("watch");
        // Upstream's watch handler answers an unparsable version with a bare 500.
        let rv = parse_rv_field(q.get("resourceVersion")).map_err(|e| {
            if watch {
                ApiError::new(500, "", e)
            } else {
                ApiError::bad_request(format!("invalid resource version: {e}"))
            }
        })?;
        let rv_raw = q.get("resourceVersion").unwrap_or("");
        let match_raw = q.get("resourceVersionMatch").unwrap_or("");
        let continue_token = q
            .get("continue")
            .filter(|c| !c.is_empty())
            .map(str::to_string);
        let send_initial_events = q
            .get("sendInitialEvents")
            .map(|_| q.flag("sendInitialEvents"));
        let causes = if watch {
            watch_option_causes(match_raw, send_initial_events, continue_token.is_some())
        } else {
            list_option_causes(
                match_raw,
                rv_raw,
                send_initial_events,
                continue_token.is_some(),
            )
        };
        if !causes.is_empty() {
            return Err(ApiError::invalid_options_causes("ListOptions", causes));
        }
        let rv_match = match match_raw {
            "NotOlderThan" => Some(RvMatch::NotOlderThan),
            "Exact" => Some(RvMatch::Exact),
            _ => None,
        };
        if !watch && continue_token.is_some() && rv.is_some_and(|r| r != 0) {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        Ok(Self {
            selectors: Selectors { labels, fields },
            rv,
            rv_match,
            limit: q.uint("limit")?.unwrap_or(0),
            continue_token,
            bookmarks: q.flag("allowWatchBookmarks"),
            send_initial_events,
            timeout_seconds: q.uint("timeoutSeconds")?,
        })
    }
}

/// What upstream's list-options validation finds wrong with a list's options, in its order.
fn list_option_causes(
    match_raw: &str,
    rv_raw: &str,
    send_initial_events: Option<bool>,
    has_continue: bool,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let field = "resourceVersionMatch";
    if !match_raw.is_empty() {
        if rv_raw.is_empty() {
            causes.push(Cause::typed(
                field,
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if has_continue {
            causes.push(Cause::typed(
                field,
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if match_raw != "Exact" && match_raw != "NotOlderThan" {
            causes.push(Cause::typed(
                field,
                &format!(
                    "Unsupported value: {match_raw:?}: supported values: \"Exact\", \"NotOlderThan\", \"\""
                ),
            ));
        }
        if match_raw == "Exact" && rv_raw == "0" {
            causes.push(Cause::typed(
                field,
                "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if send_initial_events.is_some() {
        causes.push(Cause::typed(
            "sendInitialEvents",
            "Forbidden: sendInitialEvents is forbidden for list",
        ));
    }
    causes
}

/// What upstream's watch-options validation finds wrong with a watch's options, in its order.
fn watch_option_causes(
    match_raw: &str,
    send_initial_events: Option<bool>,
    has_continue: bool,
) -> Vec<Cause> {
    let mut causes = Vec::new();
    let field = "resourceVersionMatch";
    if send_initial_events.is_some() && match_raw != "NotOlderThan" {
        causes.push(Cause::typed(
            field,
            "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !match_raw.is_empty() {
        if send_initial_events.is_none() {
            causes.push(Cause::typed(
                field,
                "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if match_raw != "NotOlderThan" {
            causes.push(Cause::typed(
                field,
                &format!("Unsupported value: {match_raw:?}: supported values: \"NotOlderThan\""),
            ));
        }
        if has_continue {
            causes.push(Cause::typed(
                field,
                "Forbidden: resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::builtins::builtins;

    fn info() -> std::sync::Arc<ResourceInfo> {
        builtins()
            .into_iter()
            .find(|r| r.plural == "configmaps")
            .expect("configmaps")
    }

    #[test]
    fn booleans_follow_kubernetes_rules() {
        let q = Query::parse(Some("watch=True&a=0&b=false&c=&d=FALSE"));
        assert!(q.flag("watch"));
        assert!(!q.flag("a"));
        assert!(!q.flag("b"));
        assert!(q.flag("c"));
        assert!(!q.flag("d"));
        assert!(!q.flag("missing"));
    }

    #[test]
    fn list_option_validation() {
        let p = |s: &str| ListOptions::parse(&Query::parse(Some(s)), &info()).map_err(|e| e.code);
        assert!(p("").is_ok());
        assert_eq!(p("resourceVersionMatch=Exact").err(), Some(422));
        assert_eq!(
            p("resourceVersion=0&resourceVersionMatch=Exact").err(),
            Some(422)
        );
        assert_eq!(
            p("resourceVersion=1&resourceVersionMatch=Bogus").err(),
            Some(422)
        );
        assert_eq!(p("sendInitialEvents=true").err(), Some(422));
        assert_eq!(p("resourceVersion=abc").err(), Some(400));
        assert_eq!(p("limit=-1").err(), Some(400));
        assert_eq!(p("continue=x&resourceVersion=5").err(), Some(400));
        assert!(p("watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan").is_ok());
        assert_eq!(p("watch=1&sendInitialEvents=true").err(), Some(422));
        assert_eq!(
            p("watch=1&resourceVersionMatch=NotOlderThan").err(),
            Some(422)
        );
        assert_eq!(p("watch=1&sendInitialEvents=false").err(), Some(422));
    }
}
