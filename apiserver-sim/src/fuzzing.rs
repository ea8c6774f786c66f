//! Properties of the request-input parsers and patch algorithms, checked by the fuzz
//! targets (`fuzz/`) and by the property tests. Each check returns the first violated
//! property as an `Err` describing it. Not a stable API.

use serde_json::{Value, json};

pub use crate::api::patch::PatchKind;
pub use crate::machinery::selector::{FieldSelector, LabelSelector};

/// Resources whose field selectors the checks exercise: (group, plural).
pub const FIELD_RESOURCES: &[(&str, &str)] = &[
    ("", "configmaps"),
    ("", "pods"),
    ("", "events"),
    ("", "secrets"),
    ("", "namespaces"),
];

fn sample_objects() -> Vec<Value> {
    vec![
        json!({}),
        json!({"metadata": {"name": "a", "namespace": "ns"}}),
        json!({"metadata": {"name": "web-0", "namespace": "default",
                            "labels": {"app": "web", "tier": "fe", "a": ""}},
               "type": "Opaque", "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}),
        json!({"metadata": {"name": "x", "labels": {"app": "db", "x.io/y": "1"}},
               "involvedObject": {"kind": "Pod", "name": "x"}, "reason": 3}),
    ]
}

/// An object whose labels (and name, namespace and a few fields) are the `k=v` pairs of
/// `input`, so that selectors built from the same text have a chance to match it.
fn object_from(input: &str) -> Value {
    let mut labels = serde_json::Map::new();
    let mut obj = json!({"metadata": {}});
    for part in input.split(',') {
        let Some((k, v)) = part.split_once('=') else {
            continue;
        };
        let (k, v) = (
            k.trim_end_matches('!').trim(),
            v.trim_start_matches('=').trim(),
        );
        labels.insert(k.to_string(), Value::String(v.to_string()));
        match k {
            "metadata.name" => obj["metadata"]["name"] = json!(v),
            "metadata.namespace" => obj["metadata"]["namespace"] = json!(v),
            "type" | "reason" => obj[k] = json!(v),
            _ => {}
        }
    }
    obj["metadata"]["labels"] = Value::Object(labels);
    obj
}

/// `input` as a label selector: parsing never panics; a selector that parses displays in a
/// canonical form that parses back to the same selector (and displays the same); both
/// match the same objects, and matching is repeatable.
pub fn check_label_selector(input: &str) -> Result<(), String> {
    let Ok(sel) = LabelSelector::parse(input) else {
        return Ok(());
    };
    let text = sel.to_string();
    let again = LabelSelector::parse(&text)
        .map_err(|e| format!("canonical form {text:?} of {input:?} does not parse: {e}"))?;
    if again != sel || again.to_string() != text {
        return Err(format!(
            "{input:?} → {text:?} → {again:?} is not the same selector"
        ));
    }
    let mut objects = sample_objects();
    objects.push(object_from(input));
    for o in &objects {
        let m = sel.matches(o);
        if m != again.matches(o) || m != sel.matches(o) {
            return Err(format!("{input:?} matches {o} inconsistently"));
        }
    }
    Ok(())
}

/// `input` as a field selector of every resource in [`FIELD_RESOURCES`]: the same
/// properties as [`check_label_selector`].
pub fn check_field_selector(input: &str) -> Result<(), String> {
    let mut objects = sample_objects();
    objects.push(object_from(input));
    for (group, plural) in FIELD_RESOURCES {
        let Ok(sel) = FieldSelector::parse(input, group, plural) else {
            continue;
        };
        let text = sel.to_string();
        let again = FieldSelector::parse(&text, group, plural).map_err(|e| {
            format!("canonical form {text:?} of {input:?} does not parse for {plural}: {e}")
        })?;
        if again != sel || again.to_string() != text {
            return Err(format!(
                "{input:?} → {text:?} → {again:?} is not the same selector ({plural})"
            ));
        }
        for o in &objects {
            let m = sel.matches(o);
            if m != again.matches(o) || m != sel.matches(o) {
                return Err(format!("{input:?} matches {o} inconsistently ({plural})"));
            }
        }
    }
    Ok(())
}

/// A patch applied to `base`: with `builtin`, as to a Pod (its fields' patch strategies and
/// merge keys), else as to a custom resource (no strategies: lists are replaced).
pub fn apply_patch(
    kind: PatchKind,
    base: &Value,
    patch: &Value,
    builtin: bool,
) -> Result<Value, crate::ApiError> {
    let shape = builtin
        .then(|| crate::kinds::patch_strategies::root("", "v1", "Pod"))
        .flatten();
    crate::api::patch::apply(kind, base, patch, shape)
}

/// Every patch format applied to `base`: never a panic; a success is a JSON document that
/// serializes and parses back unchanged; a refusal is a client error (4xx), never a 5xx
/// except upstream's 500 for a `$patch` directive it does not know; a merge patch applied twice changes nothing more (RFC 7386); an empty JSON patch is a
/// no-op.
pub fn check_patch(base: &Value, patch: &Value) -> Result<(), String> {
    for kind in [
        PatchKind::Json,
        PatchKind::Merge,
        PatchKind::Strategic,
        PatchKind::Apply,
    ] {
        for builtin in [true, false] {
            match apply_patch(kind, base, patch, builtin) {
                Ok(out) => {
                    let text = serde_json::to_string(&out)
                        .map_err(|e| format!("{kind:?} result does not serialize: {e}"))?;
                    let back: Value = serde_json::from_str(&text)
                        .map_err(|e| format!("{kind:?} result is not JSON: {e}"))?;
                    if back != out {
                        return Err(format!("{kind:?} result does not round-trip: {text}"));
                    }
                }
                Err(e) if (400..500).contains(&e.code) => {}
                // Upstream refuses a `$patch` directive it does not know with a bare 500.
                Err(e) if e.code == 500 && is_directive_refusal(&e.message) => {}
                Err(e) => return Err(format!("{kind:?} failed with {}: {e}", e.code)),
            }
        }
    }
    if let Ok(once) = apply_patch(PatchKind::Merge, base, patch, true) {
        let twice = apply_patch(PatchKind::Merge, &once, patch, true)
            .map_err(|e| format!("merge patch refused the second time: {e}"))?;
        if twice != once {
            return Err(format!(
                "merge patch is not idempotent: {once} then {twice}"
            ));
        }
    }
    match apply_patch(PatchKind::Json, base, &json!([]), true) {
        Ok(same) if &same == base => Ok(()),
        other => Err(format!("an empty JSON patch changed {base}: {other:?}")),
    }
}

/// Whether a strategic merge failed on a `$patch` directive, as upstream words it.
fn is_directive_refusal(message: &str) -> bool {
    message.starts_with("unknown patch type: ")
        || message == "merging lists cannot yet be specified in the patch"
}

/// Splits fuzz input into a base document and a patch (at the first newline) and checks
/// them with [`check_patch`] when both are JSON.
pub fn check_patch_bytes(data: &[u8]) -> Result<(), String> {
    let split = data.iter().position(|b| *b == b'\n').unwrap_or(data.len());
    let (base, patch) = data.split_at(split);
    let patch = patch.get(1..).unwrap_or_default();
    match (
        serde_json::from_slice::<Value>(base),
        serde_json::from_slice::<Value>(patch),
    ) {
        (Ok(base), Ok(patch)) => check_patch(&base, &patch),
        _ => Ok(()),
    }
}
