//! The items the probes put in each kind of merged list, by the items' schema: the items a
//! list starts with (distinct merge keys), and the change an apply makes — one field of the
//! last item, or, for items that are nothing but their key, one more item.

use serde_json::{Value, json};

/// What an apply changes in a list.
pub enum Change {
    /// These fields of the last item (merged into it).
    Field(Value),
    /// One more item.
    Add(Value),
}

/// A list's starting items, the change, and fields its parent object needs beside it.
pub struct Sample {
    /// The items the list starts with.
    pub items: Vec<Value>,
    /// What the apply changes.
    pub change: Change,
    /// Fields set beside the list in its parent (a pod's `podIP` beside its `podIPs`).
    pub siblings: Value,
}

fn sample(items: Vec<Value>, change: Change) -> Sample {
    Sample {
        items,
        change,
        siblings: json!({}),
    }
}

fn field(items: Vec<Value>, change: Value) -> Sample {
    sample(items, Change::Field(change))
}

fn add(items: Vec<Value>, new: Value) -> Sample {
    sample(items, Change::Add(new))
}

/// A webhook that nothing calls: its rule names a resource nobody writes.
fn webhook(name: &str) -> Value {
    json!({"name": name, "clientConfig": {"url": "https://127.0.0.1:9/mergekeys"},
        "rules": [{"apiGroups": ["mergekeys.example.com"], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["nothings"]}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Ignore"})
}

fn condition(t: &str) -> Value {
    json!({"type": t, "status": "True", "reason": "Probe", "message": t,
        "lastTransitionTime": "2025-01-01T00:00:00Z"})
}

/// One container status, for the statuses whose lists the probes go into.
pub fn container_status(name: &str) -> Value {
    json!({"name": name, "image": "busybox:1.36", "imageID": "", "ready": false,
        "restartCount": 0, "state": {"waiting": {"reason": "Probe"}}})
}

/// The sample of a list of `item` (a schema name); `owners` are two owner references to
/// objects the scenario created. `None` when no sample is written for that item yet.
pub fn of(item: &str, owners: &[Value; 2]) -> Option<Sample> {
    let ty = item.rsplit('.').next().unwrap_or(item);
    Some(match ty {
        "Container" | "EphemeralContainer" => field(
            vec![
                json!({"name": "a", "image": "busybox:1.36"}),
                json!({"name": "b", "image": "busybox:1.36"}),
            ],
            json!({"image": "busybox:1.37"}),
        ),
        "EnvVar" => field(
            vec![
                json!({"name": "A", "value": "1"}),
                json!({"name": "B", "value": "2"}),
            ],
            json!({"value": "3"}),
        ),
        "ContainerPort" => field(
            vec![
                json!({"containerPort": 8080, "name": "a"}),
                json!({"containerPort": 8081, "name": "b"}),
            ],
            json!({"name": "c"}),
        ),
        "VolumeMount" | "VolumeMountStatus" => field(
            vec![
                json!({"name": "v", "mountPath": "/a"}),
                json!({"name": "v", "mountPath": "/b"}),
            ],
            json!({"readOnly": true}),
        ),
        "VolumeDevice" => field(
            vec![
                json!({"name": "d1", "devicePath": "/dev/a"}),
                json!({"name": "d2", "devicePath": "/dev/b"}),
            ],
            json!({"name": "d3"}),
        ),
        "Volume" => field(
            vec![
                json!({"name": "v", "emptyDir": {}}),
                json!({"name": "d1", "persistentVolumeClaim": {"claimName": "c1"}}),
            ],
            json!({"persistentVolumeClaim": {"claimName": "c1", "readOnly": true}}),
        ),
        "LocalObjectReference" => add(
            vec![json!({"name": "a"}), json!({"name": "b"})],
            json!({"name": "c"}),
        ),
        "HostAlias" => field(
            vec![
                json!({"ip": "10.0.0.1", "hostnames": ["a"]}),
                json!({"ip": "10.0.0.2", "hostnames": ["b"]}),
            ],
            json!({"hostnames": ["c"]}),
        ),
        "TopologySpreadConstraint" => {
            let spread = |key: &str| {
                json!({"maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "mergekeys"}}})
            };
            field(vec![spread("zone"), spread("host")], json!({"maxSkew": 2}))
        }
        "PodSchedulingGate" => add(
            vec![
                json!({"name": "example.com/a"}),
                json!({"name": "example.com/b"}),
            ],
            json!({"name": "example.com/c"}),
        ),
        "PodResourceClaim" | "PodResourceClaimStatus" => field(
            vec![
                json!({"name": "a", "resourceClaimName": "rc-a"}),
                json!({"name": "b", "resourceClaimName": "rc-b"}),
            ],
            json!({"resourceClaimName": "rc-c"}),
        ),
        t if t.ends_with("Condition") && t != "MatchCondition" => field(
            vec![condition("SampleA"), condition("SampleB")],
            json!({"message": "changed"}),
        ),
        "MatchCondition" => field(
            vec![
                json!({"name": "a", "expression": "true"}),
                json!({"name": "b", "expression": "true"}),
            ],
            json!({"expression": "false"}),
        ),
        "Variable" => field(
            vec![
                json!({"name": "a", "expression": "1"}),
                json!({"name": "b", "expression": "2"}),
            ],
            json!({"expression": "3"}),
        ),
        "ValidatingWebhook" | "MutatingWebhook" => field(
            vec![
                webhook("a.mergekeys.example.com"),
                webhook("b.mergekeys.example.com"),
            ],
            json!({"failurePolicy": "Fail"}),
        ),
        "ValidationRule" => field(
            vec![
                json!({"rule": "1 == 1", "message": "a"}),
                json!({"rule": "2 == 2", "message": "b"}),
            ],
            json!({"message": "c"}),
        ),
        // A ServiceAccount's secret references keep only their names: one more is added.
        "ObjectReference" => add(
            vec![json!({"name": "a"}), json!({"name": "b"})],
            json!({"name": "c"}),
        ),
        "OwnerReference" => field(owners.to_vec(), json!({"blockOwnerDeletion": false})),
        "ServicePort" => field(
            vec![
                json!({"name": "a", "port": 80, "targetPort": 8080}),
                json!({"name": "b", "port": 81, "targetPort": 8081}),
            ],
            json!({"targetPort": 9090}),
        ),
        "NodeAddress" => field(
            vec![
                json!({"type": "InternalIP", "address": "10.0.0.1"}),
                json!({"type": "Hostname", "address": "mergekeys"}),
            ],
            json!({"address": "mergekeys-2"}),
        ),
        // A pod has at most one address of each family, the first its `podIP`/`hostIP`.
        "PodIP" | "HostIP" => Sample {
            items: vec![json!({"ip": "10.0.0.1"})],
            change: Change::Add(json!({"ip": "fd00::1"})),
            siblings: if ty == "PodIP" {
                json!({"podIP": "10.0.0.1"})
            } else {
                json!({"hostIP": "10.0.0.1"})
            },
        },
        "ResourceStatus" => field(
            vec![json!({"name": "claim:a/r"}), json!({"name": "claim:b/r"})],
            json!({"resources": [{"resourceID": "x", "health": "Healthy"}]}),
        ),
        "ResourceClaimConsumerReference" => field(
            vec![
                json!({"resource": "pods", "name": "p1", "uid": "00000000-0000-4000-8000-000000000001"}),
                json!({"resource": "pods", "name": "p2", "uid": "00000000-0000-4000-8000-000000000002"}),
            ],
            json!({"name": "p3"}),
        ),
        "CSINodeDriver" => field(
            vec![
                json!({"name": "a.example.com", "nodeID": "n1"}),
                json!({"name": "b.example.com", "nodeID": "n2"}),
            ],
            json!({"nodeID": "n3"}),
        ),
        "ContainerStatus" => field(vec![container_status("c")], json!({"restartCount": 1})),
        _ => return None,
    })
}
