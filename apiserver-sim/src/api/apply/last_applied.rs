//! kubectl's client-side apply annotation (`kubectl.kubernetes.io/last-applied-configuration`)
//! as kube-apiserver treats it when the field manager is `kubectl`: moving an object from
//! `kubectl apply` to `kubectl apply --server-side` does not conflict on fields the
//! annotation says kubectl applied (and the live object still holds), and a server-side
//! apply keeps the annotation, when the object has one, equal to what was applied.

use serde_json::Value;

use super::fieldpath::go_json;
use super::schema::Ty;
use super::set::FieldSet;
use super::typed::{compare, to_field_set};

/// The annotation client-side apply keeps.
const ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The field manager whose applies the annotation concerns.
pub(crate) const KUBECTL: &str = "kubectl";

fn annotation(obj: &Value) -> Option<&str> {
    obj.get("metadata")?
        .get("annotations")?
        .get(ANNOTATION)?
        .as_str()
        .filter(|s| !s.is_empty())
}

/// The fields kubectl may take without conflict: those of the live object's last-applied
/// configuration (written for `api_version`) that the live object still has unchanged.
pub(crate) fn allowed_conflicts(live: &Value, api_version: &str, ty: Ty<'_>) -> Option<FieldSet> {
    let last: Value = serde_json::from_str(annotation(live)?).ok()?;
    if last.get("apiVersion").and_then(Value::as_str) != Some(api_version) {
        return None;
    }
    let cmp = compare(Some(&last), Some(live), ty);
    Some(
        to_field_set(&last, ty)
            .difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

/// Sets the annotation of `obj`, if it has one, to the applied `config` (without the
/// annotation itself), encoded as kubectl encodes it.
pub(crate) fn refresh(obj: &mut Value, config: &Value) {
    if annotation(obj).is_none() {
        return;
    }
    let mut last = config.clone();
    if let Some(a) = last
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        a.remove(ANNOTATION);
    }
    let text = format!("{}\n", go_json(&last));
    if let Some(a) = obj
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        a.insert(ANNOTATION.into(), Value::String(text));
    }
}
