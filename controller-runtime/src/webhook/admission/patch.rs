//! The RFC 6902 patch a defaulter's change becomes.
//!
//! The object the API server sent (`raw`) may differ from its typed round trip (`before`):
//! fields the Rust type does not know are dropped, `null`s vanish, defaults appear. A plain
//! diff from `raw` to the defaulted object would undo all of that too. So the defaulter's own
//! change (`before` → `after`) is replayed on `raw`, and the patch is the diff from `raw` to
//! that result. When the change cannot be replayed on `raw` (its shape differs too much), the
//! fallback is controller-runtime's: the diff from `raw` to `after` without the removals of
//! object fields the round trip alone would make.

use std::collections::HashSet;

use json_patch::{Patch, PatchOperation};
use serde_json::Value;

/// The patch from `raw` (as sent) that applies the change from `before` to `after`.
pub(crate) fn defaulting_patch(raw: &Value, before: &Value, after: &Value) -> Patch {
    let change = json_patch::diff(before, after);
    let mut target = raw.clone();
    if json_patch::patch(&mut target, &change).is_ok() {
        return json_patch::diff(raw, &target);
    }
    let round_trip_removals: HashSet<String> = json_patch::diff(raw, before)
        .0
        .into_iter()
        .filter_map(|operation| match operation {
            PatchOperation::Remove(remove) => Some(remove.path.to_string()),
            _ => None,
        })
        .collect();
    let operations = json_patch::diff(raw, after)
        .0
        .into_iter()
        .filter(|operation| match operation {
            PatchOperation::Remove(remove) => {
                let path = remove.path.to_string();
                !(round_trip_removals.contains(&path) && parent_is_object(raw, &path))
            }
            _ => true,
        })
        .collect();
    Patch(operations)
}

/// Whether the value holding `path`'s last token in `document` is an object (removing one of
/// its fields shifts nothing, unlike removing an array element).
fn parent_is_object(document: &Value, path: &str) -> bool {
    let parent = path.rsplit_once('/').map_or("", |(parent, _)| parent);
    document.pointer(parent).is_some_and(Value::is_object)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn applied(raw: &Value, patch: &Patch) -> Value {
        let mut document = raw.clone();
        json_patch::patch(&mut document, patch).unwrap();
        document
    }

    #[test]
    fn unknown_fields_and_nulls_survive() {
        let raw = json!({"metadata": {"name": "a", "creationTimestamp": null},
                         "spec": {"size": 1, "future": {"x": 1}}});
        let before = json!({"metadata": {"name": "a"}, "spec": {"size": 1}});
        let after = json!({"metadata": {"name": "a", "labels": {"l": "v"}}, "spec": {"size": 3}});
        let patch = defaulting_patch(&raw, &before, &after);
        assert_eq!(patch.0.len(), 2, "{patch:?}");
        assert_eq!(
            applied(&raw, &patch),
            json!({"metadata": {"name": "a", "creationTimestamp": null, "labels": {"l": "v"}},
                   "spec": {"size": 3, "future": {"x": 1}}})
        );
    }

    #[test]
    fn a_change_that_does_not_replay_falls_back_to_the_typed_diff() {
        // The round trip materialised `spec.template`, which the defaulter then filled in.
        let raw = json!({"spec": {"gone": 1}});
        let before = json!({"spec": {"template": {}}});
        let after = json!({"spec": {"template": {"image": "x"}}});
        let patch = defaulting_patch(&raw, &before, &after);
        // The unknown field is kept; the defaulted one is added.
        assert_eq!(
            applied(&raw, &patch),
            json!({"spec": {"gone": 1, "template": {"image": "x"}}})
        );
    }
}
