//! The parts of a pod its `ephemeralcontainers` and `resize` subresources write, as
//! upstream's strategies for them take them: the stored pod, with only
//! `spec.ephemeralContainers` (ephemeral containers), or only each container's and init
//! container's `resources` and `resizePolicy` (resize), taken from the body.

use serde_json::Value;

/// The stored pod `old` with the spec's ephemeral containers of `body`.
pub(crate) fn with_ephemeral_containers(old: &Value, body: &Value) -> Value {
    let mut pod = old.clone();
    let wanted = body.pointer("/spec/ephemeralContainers").cloned();
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        match wanted {
            Some(list) => spec.insert("ephemeralContainers".into(), list),
            None => spec.remove("ephemeralContainers"),
        };
    }
    pod
}

/// The stored pod `old` with the `resources` and `resizePolicy` of `body`'s containers and
/// init containers, each taken from the container at the same position with the same name.
pub(crate) fn with_resized_containers(old: &Value, body: &Value) -> Value {
    let mut pod = old.clone();
    for list in ["containers", "initContainers"] {
        let Some(items) = pod
            .get_mut("spec")
            .and_then(|s| s.get_mut(list))
            .and_then(Value::as_array_mut)
        else {
            continue;
        };
        let asked = body
            .pointer(&format!("/spec/{list}"))
            .and_then(Value::as_array);
        for (i, ctr) in items.iter_mut().enumerate() {
            let Some(new) = asked.and_then(|a| a.get(i)) else {
                continue;
            };
            if new.get("name") != ctr.get("name") {
                continue;
            }
            let Some(ctr) = ctr.as_object_mut() else {
                continue;
            };
            for field in ["resources", "resizePolicy"] {
                match new.get(field) {
                    Some(v) => ctr.insert(field.into(), v.clone()),
                    None => ctr.remove(field),
                };
            }
        }
    }
    pod
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_subresource_part_is_taken() {
        let old = json!({"metadata": {"labels": {"a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]}});
        let body = json!({"metadata": {"labels": {"a": "2"}},
            "spec": {"containers": [{"name": "c", "image": "other",
                "resources": {"limits": {"cpu": "2"}}, "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}]}],
                "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}});
        let eph = with_ephemeral_containers(&old, &body);
        assert_eq!(eph["metadata"]["labels"]["a"], "1");
        assert_eq!(eph["spec"]["containers"][0]["image"], "i");
        assert_eq!(eph["spec"]["ephemeralContainers"][0]["name"], "debug");
        let resized = with_resized_containers(&old, &body);
        assert_eq!(resized["spec"]["containers"][0]["image"], "i");
        assert_eq!(
            resized["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            "2"
        );
        assert_eq!(
            resized["spec"]["containers"][0]["resizePolicy"][0]["resourceName"],
            "cpu"
        );
        assert!(resized["spec"].get("ephemeralContainers").is_none());
        assert_eq!(resized["metadata"]["labels"]["a"], "1");
    }
}
