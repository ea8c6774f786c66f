//! The `pod-template-hash` a Deployment gives the ReplicaSet (and pods) of each pod template,
//! and template equality ignoring that label. Upstream hashes the Go struct with FNV-32a and
//! encodes the decimal number with the "safe" alphabet; the simulator hashes the template's
//! canonical JSON (keys sorted) the same way, so equal templates get equal hashes and the
//! value looks like a cluster's (`7d9f8b6c4`).

use serde_json::Value;

/// The label a Deployment's ReplicaSets and their pods carry.
pub(super) const HASH_LABEL: &str = "pod-template-hash";

/// Letters upstream uses for generated name parts (no vowels, no look-alikes).
const SAFE: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// Appends `v` as JSON with object keys in sorted order.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&m[k], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(x, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn fnv32a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// The hash of a Deployment's pod template and collision count.
pub(super) fn pod_template_hash(template: &Value, collision_count: i64) -> String {
    let mut text = String::new();
    canonical(&without_hash(template), &mut text);
    if collision_count > 0 {
        text.push_str(&collision_count.to_string());
    }
    fnv32a(text.as_bytes())
        .to_string()
        .bytes()
        .map(|b| SAFE[usize::from(b) % SAFE.len()] as char)
        .collect()
}

/// `v` without its null object members, recursively: in Go a null pointer field and an
/// absent one are the same (clients send `creationTimestamp: null` in templates).
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// The template without the `pod-template-hash` label (and without null members).
pub(super) fn without_hash(template: &Value) -> Value {
    let mut t = without_nulls(template);
    if let Some(labels) = t
        .pointer_mut("/metadata/labels")
        .and_then(Value::as_object_mut)
    {
        labels.remove(HASH_LABEL);
        if labels.is_empty()
            && let Some(md) = t.get_mut("metadata").and_then(Value::as_object_mut)
        {
            md.remove("labels");
        }
    }
    t
}

/// Whether two pod templates are equal but for the `pod-template-hash` label.
pub(super) fn equal_ignoring_hash(a: &Value, b: &Value) -> bool {
    without_hash(a) == without_hash(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_templates_hash_equally_whatever_the_key_order() {
        let a = json!({"metadata": {"labels": {"app": "web", "tier": "fe"}}, "spec": {"x": 1}});
        let b = json!({"spec": {"x": 1}, "metadata": {"labels": {"tier": "fe", "app": "web"}}});
        assert_eq!(pod_template_hash(&a, 0), pod_template_hash(&b, 0));
        let hash = pod_template_hash(&a, 0);
        assert!(
            hash.len() >= 8 && hash.bytes().all(|c| SAFE.contains(&c)),
            "{hash}"
        );
    }

    #[test]
    fn a_changed_template_or_collision_count_changes_the_hash() {
        let a = json!({"spec": {"containers": [{"image": "nginx:1.26"}]}});
        let b = json!({"spec": {"containers": [{"image": "nginx:1.27"}]}});
        assert_ne!(pod_template_hash(&a, 0), pod_template_hash(&b, 0));
        assert_ne!(pod_template_hash(&a, 0), pod_template_hash(&a, 1));
    }

    #[test]
    fn null_members_are_absent_ones() {
        let sent =
            json!({"metadata": {"creationTimestamp": null, "labels": {"app": "web"}}, "spec": {}});
        let stored = json!({"metadata": {"labels": {"app": "web"}}, "spec": {}});
        assert!(equal_ignoring_hash(&sent, &stored));
        assert_eq!(pod_template_hash(&sent, 0), pod_template_hash(&stored, 0));
    }

    #[test]
    fn the_hash_label_is_ignored_when_comparing() {
        let rs = json!({"metadata": {"labels": {"app": "web", HASH_LABEL: "abc"}}, "spec": {}});
        let d = json!({"metadata": {"labels": {"app": "web"}}, "spec": {}});
        assert!(equal_ignoring_hash(&rs, &d));
        assert_eq!(pod_template_hash(&rs, 0), pod_template_hash(&d, 0));
        let other = json!({"metadata": {"labels": {"app": "api"}}, "spec": {}});
        assert!(!equal_ignoring_hash(&rs, &other));
    }
}
