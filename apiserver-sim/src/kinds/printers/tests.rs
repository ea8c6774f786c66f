//! Rows of the printers of workload, storage and networking kinds the integration tests do
//! not print, the Pod rules they do not cover, and which served kinds get which printer
//! (Kubernetes `pkg/printers/internalversion/printers.go`; cluster-level kinds: `cluster_tests.rs`).

use jiff::{SignedDuration, Timestamp};
use serde_json::{Value, json};

use super::{Printer, builtin};

fn now() -> Timestamp {
    Timestamp::now()
}

pub(super) fn ago(secs: i64) -> String {
    (now() - SignedDuration::from_secs(secs))
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The column names and cells of an object of a built-in kind.
pub(super) fn print(group: &str, kind: &str, obj: Value) -> (Vec<String>, Vec<Value>) {
    let p = Printer::Kind(builtin(group, kind).unwrap_or_else(|| panic!("printer of {kind}")));
    let names = p.columns().iter().map(|c| c.name.to_string()).collect();
    (names, p.row(&obj, now()).cells)
}

/// Expected cells, written as JSON (cells are strings and numbers).
pub(super) fn expected(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

pub(super) fn meta(name: &str) -> Value {
    json!({"name": name, "creationTimestamp": ago(3 * 3600 + 5)})
}

#[test]
fn node() {
    let (cols, cells) = print(
        "",
        "Node",
        json!({"metadata": {"name": "n1", "creationTimestamp": ago(50 * 3600),
            "labels": {"node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "x", "kubernetes.io/role": "infra"}},
        "spec": {"unschedulable": true},
        "status": {"conditions": [{"type": "Ready", "status": "False"}],
            "addresses": [{"type": "InternalIP", "address": "192.168.1.2"}],
            "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Ubuntu"}}}),
    );
    assert_eq!(
        cols.join(", "),
        "Name, Status, Roles, Age, Version, Internal-IP, External-IP, OS-Image, Kernel-Version, Container-Runtime"
    );
    assert_eq!(
        json!(cells),
        expected(
            r#"["n1", "NotReady,SchedulingDisabled", "control-plane,infra", "2d2h", "v1.32.0", "192.168.1.2", "<none>", "Ubuntu", "<unknown>", "<unknown>"]"#
        )
    );
    let (_, cells) = print("", "Node", json!({"metadata": meta("n2")}));
    assert_eq!(&cells[1..3], &[json!("Unknown"), json!("<none>")]);
}

#[test]
fn workloads() {
    let tmpl = json!({"spec": {"containers": [{"name": "a", "image": "i"}], "nodeSelector": {"disk": "ssd"}}});
    let (cols, cells) = print(
        "apps",
        "StatefulSet",
        json!({"metadata": meta("db"), "spec": {"replicas": 3, "template": tmpl},
        "status": {"readyReplicas": 1}}),
    );
    assert_eq!(cols, ["Name", "Ready", "Age", "Containers", "Images"]);
    assert_eq!(json!(cells), expected(r#"["db", "1/3", "3h", "a", "i"]"#));
    let (cols, cells) = print(
        "apps",
        "DaemonSet",
        json!({"metadata": meta("ds"), "spec": {"template": tmpl,
        "selector": {"matchLabels": {"k": "v"}}}, "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3,
        "numberReady": 2, "updatedNumberScheduled": 3, "numberAvailable": 2}}),
    );
    assert_eq!(
        cols.join(", "),
        "Name, Desired, Current, Ready, Up-to-date, Available, Node Selector, Age, Containers, Images, Selector"
    );
    assert_eq!(
        json!(cells[1..8]),
        expected(r#"[3, 3, 2, 3, 2, "disk=ssd", "3h"]"#)
    );
    assert_eq!(cells[10], "k=v");
    let (cols, cells) = print(
        "",
        "ReplicationController",
        json!({"metadata": meta("rc"), "spec": {"selector": {"a": "b"}}}),
    );
    assert_eq!(cols[..4], ["Name", "Desired", "Current", "Ready"]);
    assert_eq!(&cells[1..4], &[json!(1), json!(0), json!(0)]);
    let (_, cells) = print(
        "apps",
        "ControllerRevision",
        json!({"metadata": {"name": "db-1", "creationTimestamp": ago(10),
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db", "uid": "u", "controller": true}]},
        "revision": 2}),
    );
    assert_eq!(
        json!(cells),
        expected(r#"["db-1", "statefulset.apps/db", 2, "10s"]"#)
    );
}

#[test]
fn jobs_and_cronjobs() {
    let job = |status: Value, spec: Value| {
        print(
            "batch",
            "Job",
            json!({"metadata": meta("j"), "spec": spec, "status": status}),
        )
        .1
    };
    let done = job(
        json!({"succeeded": 3, "startTime": ago(400), "completionTime": ago(100),
        "conditions": [{"type": "Complete", "status": "True"}]}),
        json!({"completions": 3}),
    );
    assert_eq!(&done[1..4], &[json!("Complete"), json!("3/3"), json!("5m")]);
    let running = job(json!({"startTime": ago(30)}), json!({"parallelism": 2}));
    assert_eq!(
        &running[1..4],
        &[json!("Running"), json!("0/1 of 2"), json!("30s")]
    );
    let failed = job(
        json!({"conditions": [{"type": "Failed", "status": "True"}]}),
        json!({}),
    );
    assert_eq!(&failed[1..4], &[json!("Failed"), json!("0/1"), json!("")]);
    let suspended = job(
        json!({"conditions": [{"type": "Suspended", "status": "True"}]}),
        json!({}),
    );
    assert_eq!(suspended[1], "Suspended");
    let (cols, cells) = print(
        "batch",
        "CronJob",
        json!({"metadata": meta("c"), "spec": {"schedule": "*/5 * * * *", "suspend": false,
        "jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "i"}]}}}}},
        "status": {"active": [{"name": "c-1"}], "lastScheduleTime": ago(65)}}),
    );
    assert_eq!(
        cols[..7].join(", "),
        "Name, Schedule, Timezone, Suspend, Active, Last Schedule, Age"
    );
    assert_eq!(
        json!(cells[1..7]),
        expected(r#"["*/5 * * * *", "<none>", "False", 1, "65s", "3h"]"#)
    );
}

#[test]
fn storage() {
    let (cols, cells) = print(
        "",
        "PersistentVolumeClaim",
        json!({"metadata": meta("data"),
        "spec": {"volumeName": "pv-1", "storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Bound", "capacity": {"storage": "2Gi"}, "accessModes": ["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce"]}}),
    );
    assert_eq!(
        cols.join(", "),
        "Name, Status, Volume, Capacity, Access Modes, StorageClass, VolumeAttributesClass, Age, VolumeMode"
    );
    assert_eq!(
        json!(cells),
        expected(
            r#"["data", "Bound", "pv-1", "2Gi", "RWO,RWX", "fast", "<unset>", "3h", "<unset>"]"#
        )
    );
    let (_, cells) = print(
        "",
        "PersistentVolume",
        json!({"metadata": {"name": "pv-1", "creationTimestamp": ago(5), "deletionTimestamp": ago(1),
            "annotations": {"volume.beta.kubernetes.io/storage-class": "legacy"}},
        "spec": {"capacity": {"storage": "2Gi"}, "accessModes": ["ReadOnlyMany"], "persistentVolumeReclaimPolicy": "Retain",
            "claimRef": {"namespace": "default", "name": "data"}, "storageClassName": "fast", "volumeMode": "Filesystem"},
        "status": {"phase": "Bound"}}),
    );
    assert_eq!(
        json!(cells),
        expected(
            r#"["pv-1", "2Gi", "ROX", "Retain", "Terminating", "default/data", "legacy", "<unset>", "", "5s", "Filesystem"]"#
        )
    );
    let (_, cells) = print(
        "storage.k8s.io",
        "StorageClass",
        json!({"metadata": {"name": "fast", "creationTimestamp": ago(5),
        "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "csi.example.com"}),
    );
    assert_eq!(
        json!(cells),
        expected(r#"["fast (default)", "csi.example.com", "Delete", "Immediate", false, "5s"]"#)
    );
}

#[test]
fn networking() {
    let (cols, cells) = print(
        "networking.k8s.io",
        "Ingress",
        json!({"metadata": meta("web"),
        "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["a.example.com"]}],
            "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}, {}, {"host": "c.example.com"}, {"host": "d.example.com"}]},
        "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}, {"hostname": "lb.example.com"}]}}}),
    );
    assert_eq!(cols, ["Name", "Class", "Hosts", "Address", "Ports", "Age"]);
    assert_eq!(
        json!(cells[1..5]),
        expected(
            r#"["nginx", "a.example.com,b.example.com,c.example.com + 2 more...", "1.2.3.4,lb.example.com", "80, 443"]"#
        )
    );
    let (_, cells) = print(
        "networking.k8s.io",
        "NetworkPolicy",
        json!({"metadata": meta("deny"), "spec": {"podSelector": {}}}),
    );
    assert_eq!(cells[1], "<none>");
    let (_, cells) = print(
        "",
        "Endpoints",
        json!({"metadata": meta("web"), "subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}],
        "ports": [{"port": 80}, {"port": 443}]}]}),
    );
    assert_eq!(
        cells[1],
        "10.0.0.1:80,[fd00::1]:80,10.0.0.1:443 + 1 more..."
    );
    let (_, cells) = print(
        "discovery.k8s.io",
        "EndpointSlice",
        json!({"metadata": meta("web-abc"), "addressType": "IPv4",
        "ports": [{"port": 80}, {"name": "metrics"}, {}], "endpoints": [{"addresses": ["10.0.0.1"]}]}),
    );
    assert_eq!(
        &cells[1..4],
        &[json!("IPv4"), json!("80,metrics,*"), json!("10.0.0.1")]
    );
}

#[test]
fn pod_rules_beyond_the_common_states() {
    let pod = |md: Value, status: Value| {
        print("", "Pod", json!({"metadata": md, "spec": {"containers": [{"name": "a", "image": "i"}]}, "status": status})).1
    };
    let gated = pod(
        meta("g"),
        json!({"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
    );
    assert_eq!(gated[2], "SchedulingGated");
    let lost = pod(
        json!({"name": "l", "deletionTimestamp": ago(1)}),
        json!({"phase": "Running", "reason": "NodeLost"}),
    );
    assert_eq!(lost[2], "Unknown");
    let evicted = pod(meta("e"), json!({"phase": "Failed", "reason": "Evicted"}));
    assert_eq!(evicted[2], "Evicted");
    let finished_then_deleted = pod(
        json!({"name": "s", "deletionTimestamp": ago(1)}),
        json!({"phase": "Succeeded"}),
    );
    assert_eq!(finished_then_deleted[2], "Succeeded");
    let signal = pod(
        meta("k"),
        json!({"phase": "Running", "containerStatuses": [{"name": "a", "restartCount": 0, "ready": false,
        "state": {"terminated": {"exitCode": 0, "signal": 9}}}]}),
    );
    assert_eq!(signal[2], "Signal:9");
    let two = json!({"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]});
    let half_done = print("", "Pod", json!({"metadata": meta("h"), "spec": two, "status": {"phase": "Running",
        "conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [{"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
            {"name": "b", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}})).1;
    assert_eq!(&half_done[1..3], &[json!("1/2"), json!("NotReady")]);
    let init_failed = print("", "Pod", json!({"metadata": meta("i"), "spec": {"initContainers": [{"name": "x", "image": "i"}],
        "containers": [{"name": "a", "image": "i"}]}, "status": {"phase": "Pending", "initContainerStatuses": [
            {"name": "x", "restartCount": 0, "ready": false, "state": {"terminated": {"exitCode": 3}}}]}})).1;
    assert_eq!(init_failed[2], "Init:ExitCode:3");
}

#[test]
fn unknown_kinds_use_the_default_table() {
    assert!(builtin("rbac.authorization.k8s.io", "Role").is_none());
    assert!(builtin("", "LimitRange").is_none());
    let p = Printer::Default;
    let names: Vec<String> = p.columns().iter().map(|c| c.name.to_string()).collect();
    assert_eq!(names, ["Name", "Created At"]);
    let row = p.row(
        &json!({"metadata": {"name": "r", "creationTimestamp": "2024-05-06T07:08:09Z"}}),
        now(),
    );
    assert_eq!(row.cells, [json!("r"), json!("2024-05-06T07:08:09Z")]);
    assert_eq!(
        p.row(&json!({"metadata": {"name": "r"}}), now()).cells[1],
        "0001-01-01T00:00:00Z"
    );
}

#[test]
fn every_row_has_a_cell_per_column() {
    // IPAddress is the one upstream printer that sends an extra (age) cell.
    for family in super::FAMILIES {
        for k in family.iter().filter(|k| k.kind != "IPAddress") {
            let row = (k.row)(&json!({"metadata": {"name": "x"}}), now());
            assert_eq!(row.cells.len(), k.columns.len(), "{}/{}", k.group, k.kind);
        }
    }
}

/// Every served built-in kind gets its upstream printer; the kinds upstream has no printer
/// for get the default table (`Name`, `Created At`).
#[test]
fn every_served_builtin_kind_has_its_printer() {
    const DEFAULT_TABLE: &[(&str, &str)] = &[
        ("", "LimitRange"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("rbac.authorization.k8s.io", "ClusterRole"),
        ("rbac.authorization.k8s.io", "Role"),
    ];
    for info in crate::kinds::builtins::builtins() {
        let default = DEFAULT_TABLE.contains(&(info.group.as_str(), info.kind.as_str()));
        for version in &info.versions {
            let printer = Printer::for_resource(&info, version);
            assert_eq!(
                matches!(printer, Printer::Default),
                default,
                "{}/{} {version}",
                info.group,
                info.kind
            );
        }
    }
}
