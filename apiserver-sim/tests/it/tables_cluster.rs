//! `Table` responses of cluster-level kinds as `kubectl get` asks for them: nodes, leases, the
//! default table convertor of kinds without a printer (CRDs), and every served built-in
//! resource listed as a table (Kubernetes `pkg/printers/internalversion/printers.go`,
//! `k8s.io/apiserver/pkg/registry/rest/table.go`).

use crate::common;
use crate::tables::{cells, columns, table};

use serde_json::json;

/// printers.go `printLease` (HOLDER) and the default table convertor of kinds without a
/// printer (CRDs: NAME and CREATED AT, the creation time in RFC 3339; `"rows": null` for an
/// empty list).
#[tokio::test]
async fn lease_and_default_columns() {
    let server = common::server().await;
    let t = table(
        &server,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    )
    .await;
    assert_eq!(columns(&t), ["Name", "Created At"]);
    assert_eq!(t["columnDefinitions"][1]["type"], "date");
    assert!(t["rows"].is_null(), "{t}");
    server
        .create_json(json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "leader", "namespace": "default"}, "spec": {"holderIdentity": "pod-a_1234"}}))
        .expect("lease");
    let crd = server
        .create_json(crate::crd::foo_crd("Namespaced", "foos", "Foo"))
        .expect("crd");
    let t = table(
        &server,
        "/apis/coordination.k8s.io/v1/namespaces/default/leases",
    )
    .await;
    assert_eq!(columns(&t), ["Name", "Holder", "Age"]);
    assert_eq!(
        &cells(&t, "leader")[..2],
        &[json!("leader"), json!("pod-a_1234")]
    );
    let t = table(
        &server,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    )
    .await;
    let created = crd["metadata"]["creationTimestamp"].clone();
    assert_eq!(
        cells(&t, "foos.samplecontroller.k8s.io"),
        [json!("foos.samplecontroller.k8s.io"), created]
    );
}

/// Every built-in resource the server serves answers a list as a `Table` whose columns start
/// with its printer's (or the default convertor's) first column.
#[tokio::test]
async fn every_served_builtin_lists_as_a_table() {
    let server = common::server().await;
    let client = server.client().expect("client");
    let discovery = kube::Discovery::new(client).run().await.expect("discovery");
    let mut checked = 0;
    for group in discovery.groups() {
        for (ar, caps) in group.recommended_resources() {
            if !caps.supports_operation(kube::discovery::verbs::LIST) {
                continue;
            }
            let prefix = if ar.group.is_empty() {
                "/api".to_string()
            } else {
                format!("/apis/{}", ar.group)
            };
            let t = table(&server, &format!("{prefix}/{}/{}", ar.version, ar.plural)).await;
            let first = columns(&t).first().cloned().unwrap_or_default();
            let expected = if ar.kind == "Event" {
                "Last Seen"
            } else {
                "Name"
            };
            assert_eq!(first, expected, "{}", ar.plural);
            checked += 1;
        }
    }
    assert!(checked >= 10, "checked {checked} resources");
}

/// printers.go `printNode`: STATUS from the Ready condition (plus SchedulingDisabled), ROLES
/// from the node-role labels, VERSION, and wide addresses and node info.
#[tokio::test]
async fn node_columns() {
    let server = common::server().await;
    server
        .create_json(json!({"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "node-1", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "spec": {"unschedulable": true}}))
        .expect("node");
    let r = common::raw(&server, "PUT", "/api/v1/nodes/node-1/status", &[("Content-Type", "application/json")],
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
            "status": {"conditions": [{"type": "Ready", "status": "True"}],
                "addresses": [{"type": "InternalIP", "address": "192.168.0.10"}],
                "nodeInfo": {"kubeletVersion": "v1.32.4", "osImage": "Debian", "kernelVersion": "6.1", "containerRuntimeVersion": "containerd://1.7"}}})
        .to_string()
        .as_bytes())
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let t = table(&server, "/api/v1/nodes").await;
    assert_eq!(
        columns(&t),
        [
            "Name",
            "Status",
            "Roles",
            "Age",
            "Version",
            "Internal-IP",
            "External-IP",
            "OS-Image",
            "Kernel-Version",
            "Container-Runtime"
        ]
    );
    let c = cells(&t, "node-1");
    assert_eq!(
        &c[..3],
        &[
            json!("node-1"),
            json!("Ready,SchedulingDisabled"),
            json!("control-plane")
        ]
    );
    assert_eq!(
        &c[4..],
        &[
            json!("v1.32.4"),
            json!("192.168.0.10"),
            json!("<none>"),
            json!("Debian"),
            json!("6.1"),
            json!("containerd://1.7")
        ]
    );
}
