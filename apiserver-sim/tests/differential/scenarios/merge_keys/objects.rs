//! The object of each kind a probe starts from: valid as the API server validates it, and
//! inert on a whole cluster (no replicas, suspended jobs, pods no node matches, webhooks,
//! policies and flow schemas that match nothing, owners that exist).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::schema_walk::Kind;

/// What the objects refer to: the scenario's namespace, a PEM certificate and a PEM
/// certificate request.
pub struct Env {
    /// The scenario's namespace.
    pub ns: String,
    /// A self-signed certificate (PEM).
    pub cert: String,
    /// A certificate signing request (PEM).
    pub csr: String,
}

/// Pods of the probes run nowhere: no node has this label.
const NOWHERE: &str = "mergekeys.example.com/none";

/// The pod spec the probes' pods and templates start from: one container, the volumes the
/// mounts and devices of the probes name (`v`, and claims `d1`..`d3`), and first an ephemeral
/// volume, whose claim template has the lists of an object's metadata.
fn pod_spec(restart: &str) -> Value {
    let claim = |n: u8| json!({"name": format!("d{n}"), "persistentVolumeClaim": {"claimName": format!("c{n}")}});
    let ephemeral = json!({"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
        "storageClassName": "mergekeys-pvc"}}}});
    json!({"containers": [{"name": "c", "image": "busybox:1.36"}], "restartPolicy": restart,
        "nodeSelector": {NOWHERE: "true"},
        "volumes": [ephemeral, {"name": "v", "emptyDir": {}}, claim(1), claim(2), claim(3)]})
}

fn template(restart: &str) -> Value {
    json!({"metadata": {"labels": {"app": "mergekeys"}}, "spec": pod_spec(restart)})
}

fn selector() -> Value {
    json!({"matchLabels": {"app": "mergekeys"}})
}

/// Rules that match no request anyone makes.
fn nothing() -> Value {
    json!({"resourceRules": [{"apiGroups": ["mergekeys.example.com"], "apiVersions": ["v1"],
        "operations": ["CREATE"], "resources": ["nothings"]}]})
}

/// The object of `kind` named `name` a probe starts from (without type meta), or `None` for
/// a kind without one yet.
pub fn base(kind: &Kind, env: &Env, name: &str) -> Option<Value> {
    let ns = env.ns.as_str();
    let group = kind.group.as_str();
    let mut obj = match (group, kind.kind.as_str()) {
        ("", "ConfigMap") => json!({"data": {"a": "1"}}),
        ("", "Secret") => json!({"type": "Opaque"}),
        ("", "ServiceAccount" | "Endpoints" | "Namespace") => json!({}),
        ("", "Service") => json!({"spec": {"selector": {"app": "mergekeys"},
            "ports": [{"name": "p", "port": 1234}]}}),
        ("", "Event") => {
            json!({"involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": ns},
            "reason": "Probe", "message": "m", "type": "Normal", "source": {"component": "mergekeys"}})
        }
        ("events.k8s.io", "Event") => json!({"eventTime": "2025-01-01T00:00:00.000000Z",
            "reportingController": "example.com/mergekeys", "reportingInstance": "mergekeys-1",
            "action": "Probe", "reason": "Probe", "note": "m", "type": "Normal",
            "regarding": {"kind": "ConfigMap", "name": "x", "namespace": ns}}),
        ("", "LimitRange") => json!({"spec": {"limits": [{"type": "PersistentVolumeClaim",
            "max": {"storage": "100Gi"}}]}}),
        ("", "ResourceQuota") => json!({"spec": {"hard": {"configmaps": "1000"}}}),
        ("", "Node") => json!({"spec": {"unschedulable": true,
            "taints": [{"key": "mergekeys.example.com/probe", "effect": "NoSchedule"}]}}),
        ("", "PersistentVolume") => json!({"spec": {"capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp/mergekeys"},
            "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "mergekeys-pv"}}),
        ("", "PersistentVolumeClaim") => json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "mergekeys-pvc"}}),
        ("", "Pod") => {
            let mut spec = pod_spec("Always");
            spec["resourceClaims"] = json!([{"name": "a", "resourceClaimName": "rc-a"},
                {"name": "b", "resourceClaimName": "rc-b"}]);
            json!({"spec": spec})
        }
        ("", "PodTemplate") => json!({"template": template("Always")}),
        ("", "ReplicationController") => json!({"spec": {"replicas": 0,
            "selector": {"app": "mergekeys"}, "template": template("Always")}}),
        ("apps", "Deployment" | "ReplicaSet") => json!({"spec": {"replicas": 0,
            "selector": selector(), "template": template("Always")}}),
        ("apps", "StatefulSet") => json!({"spec": {"replicas": 0, "serviceName": "mergekeys",
            "selector": selector(), "template": template("Always")}}),
        ("apps", "DaemonSet") => {
            json!({"spec": {"selector": selector(), "template": template("Always")}})
        }
        ("apps", "ControllerRevision") => json!({"revision": 1, "data": {}}),
        ("batch", "Job") => json!({"spec": {"suspend": true, "template": template("Never")}}),
        ("batch", "CronJob") => json!({"spec": {"schedule": "0 0 1 1 *", "suspend": true,
            "jobTemplate": {"spec": {"template": template("Never")}}}}),
        ("autoscaling", "HorizontalPodAutoscaler") => json!({"spec": {"scaleTargetRef":
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "mergekeys-none"},
            "minReplicas": 1, "maxReplicas": 2}}),
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration",
        ) => json!({}),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => json!({"spec": {
            "matchConstraints": nothing(), "validations": [{"expression": "true"}]}}),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy") => json!({"spec": {
            "matchConstraints": nothing(), "reinvocationPolicy": "Never",
            "mutations": [{"patchType": "ApplyConfiguration",
                "applyConfiguration": {"expression": "Object{}"}}]}}),
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => json!({"spec": {
            "policyName": "mergekeys-none", "validationActions": ["Deny"]}}),
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicyBinding") => json!({"spec": {
            "policyName": "mergekeys-none"}}),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            let group = name.split_once('.').map_or("", |(_, g)| g);
            json!({"spec": {"group": group, "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema":
                    {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object"}}}}}]}})
        }
        ("apiregistration.k8s.io", "APIService") => {
            let group = name.split_once('.').map_or("", |(_, g)| g);
            json!({"spec": {"group": group, "version": "v1", "groupPriorityMinimum": 1000,
                "versionPriority": 15, "insecureSkipTLSVerify": true,
                "service": {"namespace": ns, "name": "mergekeys-none", "port": 443}}})
        }
        ("certificates.k8s.io", "CertificateSigningRequest") => json!({"spec": {
            "request": STANDARD.encode(&env.csr), "signerName": "example.com/mergekeys",
            "usages": ["digital signature"]}}),
        ("certificates.k8s.io", "ClusterTrustBundle") => json!({"spec": {"trustBundle": env.cert}}),
        ("certificates.k8s.io", "PodCertificateRequest") => json!({"spec": {
            "signerName": "example.com/mergekeys", "podName": "p",
            "podUID": "00000000-0000-4000-8000-000000000001", "serviceAccountName": "default",
            "serviceAccountUID": "00000000-0000-4000-8000-000000000002", "nodeName": "n",
            "nodeUID": "00000000-0000-4000-8000-000000000003", "pkixPublicKey": "",
            "proofOfPossession": ""}}),
        ("coordination.k8s.io", "Lease") => json!({"spec": {"holderIdentity": "mergekeys"}}),
        ("discovery.k8s.io", "EndpointSlice") => json!({"addressType": "IPv4", "endpoints": []}),
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => json!({"spec": {
            "priorityLevelConfiguration": {"name": "mergekeys-none"}, "matchingPrecedence": 9000,
            "rules": [{"subjects": [{"kind": "User", "user": {"name": "mergekeys-nobody"}}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/mergekeys"]}]}]}}),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => json!({"spec": {
            "type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                "limitResponse": {"type": "Reject"}}}}),
        ("networking.k8s.io", "IPAddress") => json!({"spec": {"parentRef":
            {"group": "", "resource": "services", "namespace": ns, "name": "mergekeys-none"}}}),
        ("networking.k8s.io", "Ingress") => json!({"spec": {"defaultBackend":
            {"service": {"name": "mergekeys", "port": {"number": 80}}}}}),
        ("networking.k8s.io", "IngressClass") => {
            json!({"spec": {"controller": "example.com/mergekeys"}})
        }
        ("networking.k8s.io", "NetworkPolicy") => json!({"spec": {"podSelector": {}}}),
        ("networking.k8s.io", "ServiceCIDR") => json!({"spec": {"cidrs": ["10.250.0.0/24"]}}),
        ("node.k8s.io", "RuntimeClass") => json!({"handler": "mergekeys"}),
        ("policy", "PodDisruptionBudget") => {
            json!({"spec": {"minAvailable": 1, "selector": selector()}})
        }
        ("rbac.authorization.k8s.io", "ClusterRole" | "Role") => json!({"rules": []}),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding" | "RoleBinding") => json!({"roleRef":
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "mergekeys-none"}}),
        ("resource.k8s.io", "DeviceClass") => json!({"spec": {}}),
        ("resource.k8s.io", "DeviceTaintRule") => json!({"spec": {
            "deviceSelector": {"driver": "mergekeys.example.com"},
            "taint": {"key": "example.com/mergekeys", "effect": "NoSchedule"}}}),
        ("resource.k8s.io", "ResourceClaim") => json!({"spec": {"devices": {}}}),
        ("resource.k8s.io", "ResourceClaimTemplate") => json!({"spec": {"spec": {"devices": {}}}}),
        ("resource.k8s.io", "ResourceSlice") => json!({"spec": {"driver": "mergekeys.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "mergekeys-node", "devices": []}}),
        ("scheduling.k8s.io", "PriorityClass") => json!({"value": 1000}),
        ("storage.k8s.io", "CSIDriver") => json!({"spec": {}}),
        ("storage.k8s.io", "CSINode") => json!({"spec": {"drivers": []}}),
        ("storage.k8s.io", "CSIStorageCapacity") => json!({"storageClassName": "mergekeys"}),
        ("storage.k8s.io", "StorageClass") => json!({"provisioner": "example.com/mergekeys"}),
        ("storage.k8s.io", "VolumeAttachment") => {
            json!({"spec": {"attacher": "mergekeys.example.com",
            "nodeName": "mergekeys-node", "source": {"persistentVolumeName": "mergekeys-pv"}}})
        }
        ("storage.k8s.io", "VolumeAttributesClass") => {
            json!({"driverName": "example.com/mergekeys", "parameters": {"tier": "a"}})
        }
        ("storagemigration.k8s.io", "StorageVersionMigration") => json!({"spec": {"resource":
            {"group": "mergekeys.example.com", "resource": "nothings"}}}),
        _ => return None,
    };
    obj["apiVersion"] = json!(kind.api_version());
    obj["kind"] = json!(kind.kind);
    obj["metadata"] = if kind.namespaced {
        json!({"name": name, "namespace": ns})
    } else {
        json!({"name": name})
    };
    Some(obj)
}

/// The name of the `index`th probe object of `kind` in run `run`: namespaced objects are
/// unique in the scenario's namespace, cluster-scoped ones carry the run (an IP address for
/// an `IPAddress`, `<plural>.<group>` for a CRD, `<version>.<group>` for an `APIService`, in
/// groups of their own: kube-apiserver registers an `APIService` for each CRD's group).
pub fn name(kind: &Kind, index: usize, run: &str) -> String {
    match (kind.group.as_str(), kind.kind.as_str()) {
        ("networking.k8s.io", "IPAddress") => format!("192.168.250.{}", index + 1),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            format!("widgets.mk{index}-{run}.example.com")
        }
        ("apiregistration.k8s.io", "APIService") => format!("v1.mkapi{index}-{run}.example.com"),
        _ if kind.namespaced => format!("mk-{index}"),
        _ => format!("mk-{index}-{run}"),
    }
}
