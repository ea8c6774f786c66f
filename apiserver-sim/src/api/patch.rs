//! PATCH algorithms: RFC 6902 JSON patch, RFC 7386 merge patch, strategic merge patch
//! (built-ins).
//!
//! Server-side apply with field ownership lives in [`crate::api::apply`]; here an apply
//! document is only merged like a strategic merge patch, which is what a `/scale` apply
//! gets.

use serde_json::{Map, Value};

use crate::api::strategic_merge::strategic_merge;
use crate::kinds::patch_strategies::Shape;
use crate::machinery::status::{ApiError, ApiResult};

/// The patch formats, by `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/json-patch+json`.
    Json,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml` (a YAML or JSON body).
    Apply,
}

impl PatchKind {
    /// Parses a `Content-Type` (parameters stripped); 415 when unknown or not served.
    pub fn from_content_type(ct: &str, builtin: bool) -> ApiResult<Self> {
        match crate::api::repr::media_type(ct).as_str() {
            "application/json-patch+json" => Ok(Self::Json),
            "application/merge-patch+json" => Ok(Self::Merge),
            "application/strategic-merge-patch+json" if builtin => Ok(Self::Strategic),
            "application/apply-patch+yaml" => Ok(Self::Apply),
            _ => Err(ApiError::unsupported_patch_type()),
        }
    }
}

/// Applies a patch document to `base`, an object of schema `shape` (the strategic merge's
/// patch strategies and merge keys; `None` for custom resources).
pub fn apply(
    kind: PatchKind,
    base: &Value,
    patch: &Value,
    shape: Option<Shape>,
) -> ApiResult<Value> {
    match kind {
        PatchKind::Json => json_patch(base, patch),
        PatchKind::Merge => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("merge patch must be a JSON object"));
            }
            let mut out = base.clone();
            merge_patch(&mut out, patch);
            Ok(out)
        }
        PatchKind::Strategic | PatchKind::Apply => {
            if !patch.is_object() {
                return Err(ApiError::bad_request("patch must be a JSON object"));
            }
            let mut out = base.clone();
            // Upstream answers a directive it refuses with a bare 500.
            strategic_merge(&mut out, patch, shape).map_err(|why| ApiError::new(500, "", why))?;
            Ok(out)
        }
    }
}

/// RFC 7386 JSON merge patch.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge_patch(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// JSON patch

/// A JSON patch operation that does not apply: upstream answers every such failure with the
/// generic 422 and no detail, so the detail only goes to the simulator's log.
fn patch_err(why: impl Into<String>) -> ApiError {
    tracing::debug!(why = why.into(), "json patch operation failed");
    ApiError::generic_invalid()
}

/// The operations of a JSON patch document, checked as upstream decodes them (into a list of
/// `op`/`path`/`from`/`value` records) before applying any: a 400 in Go's words otherwise.
fn json_patch_ops(patch: &Value) -> ApiResult<&[Value]> {
    let decode_err = |what: String| ApiError::bad_request(format!("error decoding patch: {what}"));
    let ops = match patch {
        Value::Array(ops) => ops.as_slice(),
        Value::Null => &[],
        other => {
            return Err(decode_err(format!(
                "json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                go_json_type(other)
            )));
        }
    };
    for op in ops {
        let Value::Object(fields) = op else {
            if op.is_null() {
                continue;
            }
            return Err(decode_err(format!(
                "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                go_json_type(op)
            )));
        };
        for field in ["op", "path", "from"] {
            match fields.get(field) {
                None | Some(Value::String(_) | Value::Null) => {}
                Some(other) => {
                    return Err(decode_err(format!(
                        "json: cannot unmarshal {} into Go struct field jsonPatchOp.{field} of type string",
                        go_json_type(other)
                    )));
                }
            }
        }
    }
    Ok(ops)
}

/// The JSON type of a value as Go's decoder names it in type errors.
fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

fn unescape(tok: &str) -> String {
    tok.replace("~1", "/").replace("~0", "~")
}

fn split_pointer(path: &str) -> ApiResult<Vec<String>> {
    if path.is_empty() {
        return Ok(Vec::new());
    }
    let rest = path
        .strip_prefix('/')
        .ok_or_else(|| patch_err(format!("invalid JSON pointer {path:?}")))?;
    Ok(rest.split('/').map(unescape).collect())
}

fn array_index(tok: &str, len: usize, allow_end: bool) -> ApiResult<usize> {
    if allow_end && tok == "-" {
        return Ok(len);
    }
    let i: usize = tok
        .parse()
        .map_err(|_| patch_err(format!("invalid array index {tok:?}")))?;
    let max = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    if i > max || (!allow_end && len == 0) {
        return Err(patch_err(format!("array index {i} out of bounds")));
    }
    Ok(i)
}

fn parent_mut<'a>(doc: &'a mut Value, toks: &[String]) -> ApiResult<&'a mut Value> {
    let mut cur = doc;
    for t in toks {
        cur = match cur {
            Value::Object(m) => m
                .get_mut(t)
                .ok_or_else(|| patch_err(format!("missing path segment {t:?}")))?,
            Value::Array(a) => {
                let i = array_index(t, a.len(), false)?;
                &mut a[i]
            }
            _ => return Err(patch_err(format!("cannot traverse into {t:?}"))),
        };
    }
    Ok(cur)
}

fn get_path<'a>(doc: &'a Value, toks: &[String]) -> Option<&'a Value> {
    let mut cur = doc;
    for t in toks {
        cur = match cur {
            Value::Object(m) => m.get(t)?,
            Value::Array(a) => a.get(t.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn add(doc: &mut Value, toks: &[String], value: Value) -> ApiResult<()> {
    let Some((last, parent)) = toks.split_last() else {
        *doc = value;
        return Ok(());
    };
    match parent_mut(doc, parent)? {
        Value::Object(m) => {
            m.insert(last.clone(), value);
            Ok(())
        }
        Value::Array(a) => {
            let i = array_index(last, a.len(), true)?;
            a.insert(i, value);
            Ok(())
        }
        _ => Err(patch_err("add target's parent is not a container")),
    }
}

fn remove(doc: &mut Value, toks: &[String]) -> ApiResult<Value> {
    let Some((last, parent)) = toks.split_last() else {
        return Err(patch_err("cannot remove the whole document"));
    };
    match parent_mut(doc, parent)? {
        Value::Object(m) => m.remove(last).ok_or_else(|| {
            patch_err(format!(
                "unable to remove nonexistent key: {last}: missing value"
            ))
        }),
        Value::Array(a) => {
            let i = array_index(last, a.len(), false)?;
            Ok(a.remove(i))
        }
        _ => Err(patch_err("remove target's parent is not a container")),
    }
}

/// RFC 6902 JSON patch with the apiserver's leniency: `test` of `null` on a missing path succeeds.
pub fn json_patch(base: &Value, patch: &Value) -> ApiResult<Value> {
    let ops = json_patch_ops(patch)?;
    let mut doc = base.clone();
    for op in ops {
        let name = op
            .get("op")
            .and_then(Value::as_str)
            .ok_or_else(|| patch_err("an operation without \"op\""))?;
        let path = op
            .get("path")
            .and_then(Value::as_str)
            .ok_or_else(|| patch_err("an operation without \"path\""))?;
        let toks = split_pointer(path)?;
        let value = || {
            op.get("value")
                .cloned()
                .ok_or_else(|| patch_err(format!("operation {name} needs a \"value\"")))
        };
        let from = || -> ApiResult<Vec<String>> {
            split_pointer(
                op.get("from")
                    .and_then(Value::as_str)
                    .ok_or_else(|| patch_err(format!("operation {name} needs \"from\"")))?,
            )
        };
        match name {
            "add" => add(&mut doc, &toks, value()?)?,
            "remove" => {
                remove(&mut doc, &toks)?;
            }
            "replace" => {
                let v = value()?;
                remove(&mut doc, &toks)?;
                add(&mut doc, &toks, v)?;
            }
            "move" => {
                let f = from()?;
                let v = remove(&mut doc, &f)?;
                add(&mut doc, &toks, v)?;
            }
            "copy" => {
                let f = from()?;
                let v = get_path(&doc, &f)
                    .cloned()
                    .ok_or_else(|| patch_err("copy from a missing path"))?;
                add(&mut doc, &toks, v)?;
            }
            "test" => {
                let want = op.get("value").cloned().unwrap_or(Value::Null);
                let got = get_path(&doc, &toks).cloned().unwrap_or(Value::Null);
                if got != want {
                    return Err(patch_err(format!("testing value {path} failed")));
                }
            }
            other => {
                return Err(patch_err(format!("unknown operation {other:?}")));
            }
        }
    }
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_patch_ops_and_test_null_on_missing() {
        let base = json!({"metadata": {"name": "a"}, "spec": {"l": [1, 2]}});
        let p = json!([
            {"op": "test", "path": "/metadata/finalizers", "value": null},
            {"op": "add", "path": "/metadata/finalizers", "value": ["f"]},
            {"op": "add", "path": "/spec/l/-", "value": 3},
            {"op": "replace", "path": "/spec/l/0", "value": 0},
            {"op": "remove", "path": "/spec/l/1"},
            {"op": "copy", "from": "/metadata/name", "path": "/spec/n"},
            {"op": "move", "from": "/spec/n", "path": "/spec/m"},
        ]);
        let out = json_patch(&base, &p).expect("patch applies");
        assert_eq!(
            out,
            json!({"metadata": {"name": "a", "finalizers": ["f"]}, "spec": {"l": [0, 3], "m": "a"}})
        );
        let failing = json!([{"op": "test", "path": "/metadata/finalizers/0", "value": "x"}]);
        assert_eq!(
            json_patch(&out, &failing).map_err(|e| e.code).err(),
            Some(422)
        );
        let missing = json!([{"op": "remove", "path": "/nope"}]);
        assert_eq!(
            json_patch(&out, &missing).map_err(|e| e.code).err(),
            Some(422)
        );
        assert_eq!(
            json_patch(&out, &json!({})).map_err(|e| e.code).err(),
            Some(400)
        );
    }

    #[test]
    fn merge_patch_removes_nulls() {
        let mut t = json!({"a": 1, "b": {"c": 2, "d": 3}});
        merge_patch(&mut t, &json!({"a": null, "b": {"c": null, "e": [1]}}));
        assert_eq!(t, json!({"b": {"d": 3, "e": [1]}}));
    }

    #[test]
    fn patch_types_follow_the_content_type() {
        assert_eq!(
            PatchKind::from_content_type("application/strategic-merge-patch+json", false)
                .map_err(|e| e.code)
                .err(),
            Some(415)
        );
        assert_eq!(
            PatchKind::from_content_type("application/merge-patch+json; charset=utf-8", false).ok(),
            Some(PatchKind::Merge)
        );
    }
}
