//! The parts of a pod its `ephemeralcontainers` and `resize` subresources write, as
//! upstream's strategies for them take them: the stored pod, with only
//! `spec.ephemeralContainers` (ephemeral containers), or only each container's and init
//! container's `resources` and `resizePolicy` (resize), taken from the body; and what an
//! ephemeral containers write may not do.

use serde_json::Value;

use crate::machinery::go_struct::{self, diff};
use crate::machinery::status::Cause;

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

/// What upstream refuses in a write of a pod's ephemeral containers: an existing one removed
/// or changed (`ValidatePodEphemeralContainersUpdate`), the change shown as a diff of the
/// internal containers.
pub(crate) fn ephemeral_container_changes(old: &Value, new: &Value) -> Vec<Cause> {
    let list = |p: &Value| {
        p.pointer("/spec/ephemeralContainers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let new_list = list(new);
    let mut causes = Vec::new();
    for o in list(old) {
        let name = o.get("name").and_then(Value::as_str).unwrap_or_default();
        let why = match new_list.iter().find(|n| n.get("name") == o.get("name")) {
            None => format!("existing ephemeral containers {name:?} may not be removed\n"),
            Some(n) if !go_struct::semantically_equal(&o, n) => {
                let shown = |c: &Value| diff::pretty(&go_struct::dump("EphemeralContainer", c));
                format!(
                    "existing ephemeral containers {name:?} may not be changed\n{}",
                    diff::unified(&shown(&o), &shown(n))
                )
            }
            Some(_) => continue,
        };
        causes.push(Cause::typed(
            "spec.ephemeralContainers",
            &format!("Forbidden: {why}"),
        ));
    }
    causes
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

    #[test]
    fn existing_ephemeral_containers_neither_change_nor_go() {
        let pod = |image: Option<&str>| match image {
            Some(i) => json!({"spec": {"ephemeralContainers": [{"name": "b", "image": i}]}}),
            None => json!({"spec": {}}),
        };
        let old = pod(Some("busybox:1.36"));
        assert!(ephemeral_container_changes(&old, &old).is_empty());
        let changed = ephemeral_container_changes(&old, &pod(Some("busybox:1.37")));
        assert_eq!(changed[0].field, "spec.ephemeralContainers");
        assert!(
            changed[0].message.starts_with(
                "Forbidden: existing ephemeral containers \"b\" may not be changed\n@@ -1,6 +1,6 @@\n {\n  \"Name\": \"b\",\n- \"Image\": \"busybox:1.36\",\n+ \"Image\": \"busybox:1.37\",\n"
            ),
            "{}",
            changed[0].message
        );
        let removed = ephemeral_container_changes(&old, &pod(None));
        assert_eq!(
            removed[0].message,
            "Forbidden: existing ephemeral containers \"b\" may not be removed\n"
        );
    }
}
