//! Printers of apps/v1 kinds: Deployment, ReplicaSet, StatefulSet, DaemonSet,
//! ControllerRevision.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::Cell::{Age, Containers, Images, Int, Name, Of};
use super::column::{AGE, CONTAINERS, IMAGES, KindPrinter, NAME, Row, SELECTOR, col, text, wide};
use super::format::{arr, containers, int, label_selector, labels, replicas, s, selector};
use super::time::age;

/// Printers of apps kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "apps",
        kind: "Deployment",
        columns: &[
            NAME,
            text("Ready", "Number of the pod with ready state"),
            text(
                "Up-to-date",
                "Total number of non-terminating pods targeted by this deployment that have the desired template spec.",
            ),
            text(
                "Available",
                "Total number of available non-terminating pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
            AGE,
            CONTAINERS,
            IMAGES,
            wide(
                "Selector",
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment. It must match the pod template's labels.",
            ),
        ],
        row: deployment,
    },
    KindPrinter {
        group: "apps",
        kind: "ReplicaSet",
        columns: &[
            NAME,
            col("Desired", "integer", "Desired number of replicas."),
            col(
                "Current",
                "integer",
                "Most recently observed number of replicas.",
            ),
            col("Ready", "integer", "Number of ready replicas."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        row: |o, now| {
            let (names, images) = containers(arr(o, "/spec/template/spec/containers"));
            Row::of(vec![
                json!(s(o, "/metadata/name")),
                json!(replicas(o)),
                json!(int(o, "/status/replicas")),
                json!(int(o, "/status/readyReplicas")),
                json!(age(o, now)),
                json!(names),
                json!(images),
                json!(label_selector(o.pointer("/spec/selector"))),
            ])
        },
    },
    KindPrinter {
        group: "apps",
        kind: "StatefulSet",
        columns: &[
            NAME,
            text("Ready", "Number of the pod with ready state"),
            AGE,
            CONTAINERS,
            IMAGES,
        ],
        row: |o, now| {
            let c = "/spec/template/spec/containers";
            Row::cells(o, now, &[Name, Of(ready), Age, Containers(c), Images(c)])
        },
    },
    KindPrinter {
        group: "apps",
        kind: "DaemonSet",
        columns: &[
            NAME,
            col(
                "Desired",
                "integer",
                "The number of nodes that should be running the daemon pod.",
            ),
            col(
                "Current",
                "integer",
                "The number of nodes running at least one daemon pod that are supposed to.",
            ),
            col(
                "Ready",
                "integer",
                "The number of nodes whose daemon pod is ready.",
            ),
            col(
                "Up-to-date",
                "integer",
                "The number of nodes running the updated daemon pod.",
            ),
            col(
                "Available",
                "integer",
                "The number of nodes whose daemon pod is available.",
            ),
            text("Node Selector", "The node selector of the pod template."),
            AGE,
            CONTAINERS,
            IMAGES,
            SELECTOR,
        ],
        row: |o, now| {
            let (names, images) = containers(arr(o, "/spec/template/spec/containers"));
            Row::of(vec![
                json!(s(o, "/metadata/name")),
                json!(int(o, "/status/desiredNumberScheduled")),
                json!(int(o, "/status/currentNumberScheduled")),
                json!(int(o, "/status/numberReady")),
                json!(int(o, "/status/updatedNumberScheduled")),
                json!(int(o, "/status/numberAvailable")),
                json!(labels(o.pointer("/spec/template/spec/nodeSelector"))),
                json!(age(o, now)),
                json!(names),
                json!(images),
                json!(label_selector(o.pointer("/spec/selector"))),
            ])
        },
    },
    KindPrinter {
        group: "apps",
        kind: "ControllerRevision",
        columns: &[
            NAME,
            text("Controller", "Controller of the object"),
            text("Revision", "The revision this object represents."),
            AGE,
        ],
        row: |o, now| {
            let controller = Of(|o| json!(controller_of(o)));
            Row::cells(o, now, &[Name, controller, Int("/revision"), Age])
        },
    },
];

/// The `Ready` cell of a Deployment or StatefulSet: `ready/desired` replicas.
fn ready(o: &Value) -> Value {
    json!(format!(
        "{}/{}",
        int(o, "/status/readyReplicas"),
        replicas(o)
    ))
}

fn deployment(o: &Value, now: Timestamp) -> Row {
    let (names, images) = containers(arr(o, "/spec/template/spec/containers"));
    // Unlike most printers, a Deployment's selector is printed raw: "" when empty.
    let sel = selector(o.pointer("/spec/selector")).unwrap_or_else(|()| "<invalid>".into());
    Row::of(vec![
        json!(s(o, "/metadata/name")),
        ready(o),
        json!(int(o, "/status/updatedReplicas")),
        json!(int(o, "/status/availableReplicas")),
        json!(age(o, now)),
        json!(names),
        json!(images),
        json!(sel),
    ])
}

/// `kind.group/name` (lower-cased group and kind) of the controlling owner, or `<none>`.
fn controller_of(o: &Value) -> String {
    let Some(owner) = arr(o, "/metadata/ownerReferences")
        .iter()
        .find(|r| r.get("controller").and_then(Value::as_bool) == Some(true))
    else {
        return "<none>".into();
    };
    let group = s(owner, "/apiVersion")
        .rsplit_once('/')
        .map_or("", |(g, _)| g);
    let kind = s(owner, "/kind");
    let gk = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let name = s(owner, "/name");
    if gk.is_empty() {
        name.to_string()
    } else {
        format!("{}/{name}", gk.to_lowercase())
    }
}
