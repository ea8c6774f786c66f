//! Rows of the printers of cluster-level kinds (RBAC, admission, scheduling, certificates...)
//! and of autoscalers, which the integration tests do not print (Kubernetes
//! `pkg/printers/internalversion/printers.go`).

use serde_json::json;

use super::tests::{expected, meta, print};

#[test]
fn cluster_kinds() {
    let (cols, cells) = print(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        json!({"metadata": meta("rb"),
        "roleRef": {"kind": "ClusterRole", "name": "view"},
        "subjects": [{"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "namespace": "ci", "name": "bot"}, {"kind": "User", "name": "bob"}]}),
    );
    assert_eq!(
        cols,
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    );
    assert_eq!(
        json!(cells),
        expected(r#"["rb", "ClusterRole/view", "3h", "alice, bob", "devs", "ci/bot"]"#)
    );
    let (_, cells) = print(
        "policy",
        "PodDisruptionBudget",
        json!({"metadata": meta("pdb"), "spec": {"minAvailable": "50%"},
        "status": {"disruptionsAllowed": 1}}),
    );
    assert_eq!(&cells[1..4], &[json!("50%"), json!("N/A"), json!(1)]);
    let (_, cells) = print(
        "scheduling.k8s.io",
        "PriorityClass",
        json!({"metadata": meta("high"), "value": 1000, "globalDefault": true}),
    );
    assert_eq!(json!(cells), expected(r#"["high", 1000, true, "3h", ""]"#));
    let (_, cells) = print(
        "certificates.k8s.io",
        "CertificateSigningRequest",
        json!({"metadata": meta("csr"),
        "spec": {"signerName": "kubernetes.io/kubelet-serving", "username": "system:node:n1", "expirationSeconds": 86400},
        "status": {"conditions": [{"type": "Approved"}], "certificate": "Zm9v"}}),
    );
    assert_eq!(
        json!(cells[2..]),
        expected(
            r#"["kubernetes.io/kubelet-serving", "system:node:n1", "24h", "Approved,Issued"]"#
        )
    );
    let (_, cells) = print(
        "resource.k8s.io",
        "ResourceClaim",
        json!({"metadata": meta("gpu"),
        "status": {"allocation": {}, "reservedFor": [{"name": "p"}]}}),
    );
    assert_eq!(cells[1], "allocated,reserved");
    let (_, cells) = print(
        "apiregistration.k8s.io",
        "APIService",
        json!({"metadata": meta("v1beta1.metrics.k8s.io"),
        "spec": {"service": {"namespace": "kube-system", "name": "metrics-server"}},
        "status": {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints"}]}}),
    );
    assert_eq!(
        json!(cells[1..3]),
        expected(r#"["kube-system/metrics-server", "False (MissingEndpoints)"]"#)
    );
}

#[test]
fn autoscalers() {
    let (cols, cells) = print(
        "autoscaling",
        "HorizontalPodAutoscaler",
        json!({"metadata": meta("web"),
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 10, "metrics": [
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}},
            {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
            {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "5"}}}]},
        "status": {"currentReplicas": 3, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 45}}}]}}),
    );
    assert_eq!(
        cols.join(", "),
        "Name, Reference, Targets, MinPods, MaxPods, Replicas, Age"
    );
    assert_eq!(
        json!(cells[1..6]),
        expected(r#"["Deployment/web", "cpu: 45%/80%, <unknown>/10 + 1 more...", "2", 10, 3]"#)
    );
    let (_, v1) = print(
        "autoscaling",
        "HorizontalPodAutoscaler",
        json!({"metadata": meta("old"),
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "old"}, "maxReplicas": 4, "targetCPUUtilizationPercentage": 70}}),
    );
    assert_eq!(&v1[2..4], &[json!("cpu: <unknown>/70%"), json!("<unset>")]);
}
