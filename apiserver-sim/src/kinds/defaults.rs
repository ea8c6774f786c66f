//! Defaults kube-apiserver gives built-in objects when it decodes a write (the generated
//! `SetDefaults_*` functions of `pkg/apis/*/v1`), for the kinds that carry a pod template and
//! for Pods: a stored Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, ReplicationController
//! or PodTemplate reads back as it does from a real server (a Job with the selector and pod
//! labels the Job registry generates), and for Services and CronJobs. Pods also get what the
//! default admission chain sets (ServiceAccount, Priority, DefaultTolerationSeconds) and the
//! status a new Pod starts with (`Pending`, its QoS class). A ServiceAccount's secret
//! references keep only their names, and the conditions of the kinds whose condition type has
//! time fields read back with those fields (`null` when not given), as the registry and the
//! Go types make them.

use serde_json::{Map, Value, json};

use crate::machinery::resource_info::ResourceInfo;

/// Sets `key` to `value` when absent (or null).
fn or_insert(m: &mut Map<String, Value>, key: &str, value: Value) {
    if m.get(key).is_none_or(Value::is_null) {
        m.insert(key.to_string(), value);
    }
}

/// An object field, created as an empty object when absent.
fn object<'a>(m: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Map<String, Value>> {
    or_insert(m, key, json!({}));
    m.get_mut(key).and_then(Value::as_object_mut)
}

/// `SetDefaults_Container`: the pull policy from the image's tag (`Always` for `:latest` or no
/// tag), the termination message path and policy, empty resources, TCP ports.
fn container(c: &mut Map<String, Value>) {
    let image = c.get("image").and_then(Value::as_str).unwrap_or_default();
    let last = image.rsplit('/').next().unwrap_or_default();
    let tag = if image.contains('@') {
        None
    } else {
        last.split_once(':').map(|(_, t)| t)
    };
    let policy = match tag {
        None if image.contains('@') => "IfNotPresent",
        None | Some("latest") => "Always",
        Some(_) => "IfNotPresent",
    };
    or_insert(c, "imagePullPolicy", json!(policy));
    or_insert(c, "terminationMessagePath", json!("/dev/termination-log"));
    or_insert(c, "terminationMessagePolicy", json!("File"));
    or_insert(c, "resources", json!({}));
    if let Some(ports) = c.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            or_insert(p, "protocol", json!("TCP"));
        }
    }
}

/// The defaults of a volume's source: file modes 0644 of secret, config map, downward API and
/// projected volumes, a host path's type, an ephemeral volume's claim in `Filesystem` mode.
fn volume(v: &mut Map<String, Value>) {
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(src) = v.get_mut(source).and_then(Value::as_object_mut) {
            or_insert(src, "defaultMode", json!(420));
        }
    }
    if let Some(src) = v.get_mut("hostPath").and_then(Value::as_object_mut) {
        or_insert(src, "type", json!(""));
    }
    let claim = v
        .get_mut("ephemeral")
        .and_then(|e| e.get_mut("volumeClaimTemplate"))
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut);
    if let Some(claim) = claim {
        or_insert(claim, "volumeMode", json!("Filesystem"));
    }
}

/// `SetDefaults_PodSpec` and its containers.
fn pod_spec(spec: &mut Map<String, Value>, restart_policy: &str) {
    or_insert(spec, "dnsPolicy", json!("ClusterFirst"));
    or_insert(spec, "restartPolicy", json!(restart_policy));
    or_insert(spec, "schedulerName", json!("default-scheduler"));
    or_insert(spec, "securityContext", json!({}));
    or_insert(spec, "terminationGracePeriodSeconds", json!(30));
    if let Some(vs) = spec.get_mut("volumes").and_then(Value::as_array_mut) {
        vs.iter_mut()
            .filter_map(Value::as_object_mut)
            .for_each(volume);
    }
    // Ephemeral containers are defaulted as containers are (`SetDefaults_EphemeralContainer`).
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        if let Some(cs) = spec.get_mut(list).and_then(Value::as_array_mut) {
            for c in cs.iter_mut().filter_map(Value::as_object_mut) {
                container(c);
            }
        }
    }
}

/// The pod template at `spec.template`, defaulted.
fn template(spec: &mut Map<String, Value>, restart_policy: &str) {
    if let Some(tpl) = spec.get_mut("template").and_then(Value::as_object_mut)
        && let Some(pod) = object(tpl, "spec")
    {
        pod_spec(pod, restart_policy);
    }
}

/// `SetDefaults_Deployment`.
fn deployment(spec: &mut Map<String, Value>) {
    or_insert(spec, "replicas", json!(1));
    or_insert(spec, "revisionHistoryLimit", json!(10));
    or_insert(spec, "progressDeadlineSeconds", json!(600));
    if let Some(strategy) = object(spec, "strategy") {
        or_insert(strategy, "type", json!("RollingUpdate"));
        if strategy.get("type").and_then(Value::as_str) == Some("RollingUpdate")
            && let Some(ru) = object(strategy, "rollingUpdate")
        {
            or_insert(ru, "maxUnavailable", json!("25%"));
            or_insert(ru, "maxSurge", json!("25%"));
        }
    }
    template(spec, "Always");
}

/// `SetDefaults_Job`: one pod at a time, one completion (when neither is given), six retries,
/// NonIndexed, not suspended, replacement pods once the old ones are terminating or failed.
fn job(spec: &mut Map<String, Value>) {
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec.insert("completions".into(), json!(1));
    }
    or_insert(spec, "parallelism", json!(1));
    or_insert(spec, "backoffLimit", json!(6));
    or_insert(spec, "completionMode", json!("NonIndexed"));
    or_insert(spec, "suspend", json!(false));
    let replacement = if spec.get("podFailurePolicy").is_none_or(Value::is_null) {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    or_insert(spec, "podReplacementPolicy", json!(replacement));
    template(spec, "Always");
}

/// The selector the Job registry generates for a new Job (unless `spec.manualSelector`):
/// its pods carry the Job's uid and name as labels, and the selector matches the uid.
/// Called once the new Job has its uid.
pub fn job_selector(info: &ResourceInfo, obj: &mut Value) {
    if !(info.builtin && info.group == "batch" && info.kind == "Job") {
        return;
    }
    let uid = crate::machinery::meta::uid(obj).to_string();
    let name = crate::machinery::meta::name(obj).to_string();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let labels = object(spec, "template")
        .and_then(|t| object(t, "metadata"))
        .and_then(|m| object(m, "labels"));
    if let Some(labels) = labels {
        for (k, v) in [
            ("batch.kubernetes.io/controller-uid", &uid),
            ("batch.kubernetes.io/job-name", &name),
            ("controller-uid", &uid),
            ("job-name", &name),
        ] {
            or_insert(labels, k, json!(v));
        }
    }
    or_insert(
        spec,
        "selector",
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}),
    );
}

/// `SetDefaults_Service`: type ClusterIP, no session affinity, TCP ports whose target is the
/// port itself, `Cluster` traffic policies, node ports for load balancers.
fn service(spec: &mut Map<String, Value>) {
    or_insert(spec, "type", json!("ClusterIP"));
    or_insert(spec, "sessionAffinity", json!("None"));
    let ty = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if ty != "ExternalName" {
        or_insert(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if ty == "NodePort" || ty == "LoadBalancer" {
        or_insert(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if ty == "LoadBalancer" {
        or_insert(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for p in ports.iter_mut().filter_map(Value::as_object_mut) {
            or_insert(p, "protocol", json!("TCP"));
            let unset = p
                .get("targetPort")
                .is_none_or(|t| t.is_null() || *t == json!(0) || *t == json!(""));
            if unset && let Some(port) = p.get("port").cloned() {
                p.insert("targetPort".into(), port);
            }
        }
    }
}

/// What a new Pod gets from the defaults and the default admission plugins.
fn pod(obj: &mut Map<String, Value>) {
    let Some(spec) = object(obj, "spec") else {
        return;
    };
    pod_spec(spec, "Always");
    or_insert(spec, "enableServiceLinks", json!(true));
    or_insert(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    or_insert(spec, "priority", json!(0));
    or_insert(spec, "serviceAccountName", json!("default"));
    let sa = spec
        .get("serviceAccountName")
        .cloned()
        .unwrap_or(json!("default"));
    or_insert(spec, "serviceAccount", sa);
    or_insert(
        spec,
        "tolerations",
        json!([
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
        ]),
    );
}

/// Whether any container of a pod spec asks for resources (else its QoS class is BestEffort).
fn asks_for_resources(spec: &Value) -> bool {
    ["initContainers", "containers"].iter().any(|list| {
        spec[*list].as_array().is_some_and(|cs| {
            cs.iter().any(|c| {
                ["limits", "requests"].iter().any(|k| {
                    c["resources"][*k]
                        .as_object()
                        .is_some_and(|m| !m.is_empty())
                })
            })
        })
    })
}

/// The status a new object of a built-in kind starts with (the registry strategies'
/// `PrepareForCreate`): a Pod `Pending` with its QoS class, a ReplicaSet with 0 replicas,
/// an empty Deployment status.
pub fn status_on_create(info: &ResourceInfo, obj: &mut Value) {
    let status = match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod") => {
            let mut status = json!({"phase": "Pending"});
            if !asks_for_resources(&obj["spec"]) {
                status["qosClass"] = json!("BestEffort");
            }
            status
        }
        ("apps", "ReplicaSet") | ("", "ReplicationController") => json!({"replicas": 0}),
        ("apps", "Deployment") => json!({}),
        _ => return,
    };
    if let Some(m) = obj.as_object_mut() {
        m.insert("status".into(), status);
    }
}

/// Applies the defaults of a built-in kind to an object being written.
pub fn apply(info: &ResourceInfo, obj: &mut Value) {
    let Some(m) = obj.as_object_mut() else {
        return;
    };
    match (info.group.as_str(), info.kind.as_str()) {
        ("apps", "Deployment") => {
            if let Some(spec) = object(m, "spec") {
                deployment(spec);
            }
        }
        ("apps", "ReplicaSet") | ("", "ReplicationController") => {
            if let Some(spec) = object(m, "spec") {
                or_insert(spec, "replicas", json!(1));
                template(spec, "Always");
            }
        }
        ("apps", "StatefulSet" | "DaemonSet") => {
            if let Some(spec) = m.get_mut("spec").and_then(Value::as_object_mut) {
                template(spec, "Always");
            }
        }
        ("", "PodTemplate") => {
            if let Some(tpl) = m.get_mut("template").and_then(Value::as_object_mut)
                && let Some(pod) = object(tpl, "spec")
            {
                pod_spec(pod, "Always");
            }
        }
        ("", "Pod") => pod(m),
        ("", "Service") => {
            if let Some(spec) = object(m, "spec") {
                service(spec);
            }
        }
        ("batch", "Job") => {
            if let Some(spec) = object(m, "spec") {
                job(spec);
            }
        }
        ("batch", "CronJob") => {
            if let Some(spec) = object(m, "spec") {
                cron_job(spec);
            }
        }
        ("", "ServiceAccount") => secret_names_only(m),
        _ => {}
    }
    condition_times(info, m);
}

/// `SetDefaults_CronJob`, and the pod template of its job template.
fn cron_job(spec: &mut Map<String, Value>) {
    or_insert(spec, "concurrencyPolicy", json!("Allow"));
    or_insert(spec, "suspend", json!(false));
    or_insert(spec, "successfulJobsHistoryLimit", json!(3));
    or_insert(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(job) = spec
        .get_mut("jobTemplate")
        .and_then(Value::as_object_mut)
        .and_then(|t| t.get_mut("spec"))
        .and_then(Value::as_object_mut)
    {
        template(job, "Always");
    }
}

/// A ServiceAccount's `secrets` keep only the secrets' names (the registry's
/// `cleanSecretReferences`: the other fields of those references are dropped).
fn secret_names_only(m: &mut Map<String, Value>) {
    if let Some(refs) = m.get_mut("secrets").and_then(Value::as_array_mut) {
        for r in refs.iter_mut() {
            let name = r.get("name").cloned();
            *r = match name {
                Some(n) => json!({"name": n}),
                None => json!({}),
            };
        }
    }
}

/// The time fields of a kind's `status.conditions` that its Go type always encodes: a
/// condition written without one reads back with it `null` (a zero `metav1.Time`).
fn condition_times(info: &ResourceInfo, m: &mut Map<String, Value>) {
    let times: &[&str] = match (info.group.as_str(), info.kind.as_str()) {
        ("", "Pod" | "PersistentVolumeClaim") | ("batch", "Job") => {
            &["lastProbeTime", "lastTransitionTime"]
        }
        ("", "Node") => &["lastHeartbeatTime", "lastTransitionTime"],
        ("apps", "Deployment") => &["lastUpdateTime", "lastTransitionTime"],
        _ => return,
    };
    let Some(conditions) = m
        .get_mut("status")
        .and_then(|s| s.get_mut("conditions"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for c in conditions.iter_mut().filter_map(Value::as_object_mut) {
        for t in times {
            or_insert(c, t, Value::Null);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        for (image, policy) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.27", "IfNotPresent"),
            ("registry:5000/nginx", "Always"),
            ("registry:5000/nginx:1", "IfNotPresent"),
            ("nginx@sha256:abc", "IfNotPresent"),
        ] {
            let mut c = json!({"image": image});
            container(c.as_object_mut().expect("object"));
            assert_eq!(c["imagePullPolicy"], policy, "{image}");
        }
    }
}
