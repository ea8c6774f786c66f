//! Printers of storage kinds: core/v1 PersistentVolume and PersistentVolumeClaim, and
//! storage.k8s.io/v1 StorageClass, VolumeAttributesClass, VolumeAttachment, CSINode,
//! CSIDriver, CSIStorageCapacity.

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::Cell::{Age, Len, Name, Str};
use super::column::{AGE, KindPrinter, NAME, Row, col, named, text, wide};
use super::format::{arr, has, name, s, strings};
use super::time::age;

/// Access modes abbreviated (`RWO,ROX,RWX,RWOP`), in that order, each once.
fn access_modes(modes: &[Value]) -> String {
    let has_mode = |m: &str| modes.iter().any(|v| v.as_str() == Some(m));
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| has_mode(m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The storage class: the beta annotation first, then `spec.storageClassName`.
fn class(o: &Value) -> String {
    o.pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .and_then(Value::as_str)
        .unwrap_or_else(|| s(o, "/spec/storageClassName"))
        .to_string()
}

fn or_unset(o: &Value, ptr: &str) -> String {
    o.pointer(ptr)
        .and_then(Value::as_str)
        .unwrap_or("<unset>")
        .to_string()
}

fn bool_or(o: &Value, ptr: &str, default: bool) -> bool {
    o.pointer(ptr).and_then(Value::as_bool).unwrap_or(default)
}

/// A quantity as stored, `0` when absent.
fn quantity(o: &Value, ptr: &str) -> String {
    match o.pointer(ptr) {
        Some(Value::String(q)) => q.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => "0".into(),
    }
}

const VOLUME_MODE: super::column::Column = wide(
    "VolumeMode",
    "Whether the volume is a filesystem or a raw block device.",
);

/// Printers of storage kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "",
        kind: "PersistentVolume",
        columns: &[
            NAME,
            text("Capacity", "The capacity of the volume."),
            text("Access Modes", "The ways the volume can be mounted."),
            text(
                "Reclaim Policy",
                "What happens to the volume when released from its claim.",
            ),
            text("Status", "The phase of the volume."),
            text("Claim", "The claim bound to the volume."),
            text("StorageClass", "StorageClass of the pv"),
            text("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
            text("Reason", "Why the volume is in this phase."),
            AGE,
            VOLUME_MODE,
        ],
        row: persistent_volume,
    },
    KindPrinter {
        group: "",
        kind: "PersistentVolumeClaim",
        columns: &[
            NAME,
            text("Status", "The phase of the claim."),
            text("Volume", "The volume bound to the claim."),
            text("Capacity", "The capacity of the bound volume."),
            text("Access Modes", "The access modes of the bound volume."),
            text("StorageClass", "StorageClass of the pvc"),
            text("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
            AGE,
            VOLUME_MODE,
        ],
        row: persistent_volume_claim,
    },
    KindPrinter {
        group: "storage.k8s.io",
        kind: "StorageClass",
        columns: &[
            NAME,
            text("Provisioner", "The provisioner of volumes of this class."),
            text(
                "ReclaimPolicy",
                "The reclaim policy of volumes of this class.",
            ),
            text("VolumeBindingMode", "When volumes of this class are bound."),
            text(
                "AllowVolumeExpansion",
                "Whether volumes of this class can be expanded.",
            ),
            AGE,
        ],
        row: |o, now| {
            let annotation = |k: &str| {
                o.pointer(&format!("/metadata/annotations/{k}"))
                    .and_then(Value::as_str)
                    == Some("true")
            };
            let mut n = s(o, "/metadata/name").to_string();
            if annotation("storageclass.kubernetes.io~1is-default-class")
                || annotation("storageclass.beta.kubernetes.io~1is-default-class")
            {
                n.push_str(" (default)");
            }
            Row::of(vec![
                json!(n),
                json!(s(o, "/provisioner")),
                json!(
                    o.get("reclaimPolicy")
                        .and_then(Value::as_str)
                        .unwrap_or("Delete")
                ),
                json!(
                    o.get("volumeBindingMode")
                        .and_then(Value::as_str)
                        .unwrap_or("Immediate")
                ),
                json!(bool_or(o, "/allowVolumeExpansion", false)),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "storage.k8s.io",
        kind: "VolumeAttributesClass",
        columns: &[
            NAME,
            text("DriverName", "The CSI driver the class is for."),
            AGE,
        ],
        row: |o, now| Row::cells(o, now, &[Name, Str("/driverName"), Age]),
    },
    KindPrinter {
        group: "storage.k8s.io",
        kind: "VolumeAttachment",
        columns: &[
            NAME,
            named("Attacher", "The volume driver that attaches the volume."),
            text("PV", "The persistent volume attached."),
            text("Node", "The node the volume is attached to."),
            col("Attached", "boolean", "Whether the volume is attached."),
            AGE,
        ],
        row: |o, now| {
            Row::of(vec![
                name(o),
                json!(s(o, "/spec/attacher")),
                json!(s(o, "/spec/source/persistentVolumeName")),
                json!(s(o, "/spec/nodeName")),
                json!(bool_or(o, "/status/attached", false)),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "storage.k8s.io",
        kind: "CSINode",
        columns: &[
            NAME,
            col(
                "Drivers",
                "integer",
                "Drivers indicates the number of CSI drivers registered on the node",
            ),
            AGE,
        ],
        row: |o, now| Row::cells(o, now, &[Name, Len("/spec/drivers"), Age]),
    },
    KindPrinter {
        group: "storage.k8s.io",
        kind: "CSIDriver",
        columns: &[
            NAME,
            col(
                "AttachRequired",
                "boolean",
                "Whether the driver needs an attach operation.",
            ),
            col(
                "PodInfoOnMount",
                "boolean",
                "Whether the driver receives pod information on mount.",
            ),
            col(
                "StorageCapacity",
                "boolean",
                "Whether the driver reports storage capacity.",
            ),
            text(
                "TokenRequests",
                "Audiences of the service account tokens the driver receives.",
            ),
            col(
                "RequiresRepublish",
                "boolean",
                "Whether the driver wants periodic republish calls.",
            ),
            text("Modes", "The volume lifecycle modes the driver supports."),
            AGE,
        ],
        row: |o, now| {
            let tokens = match o.pointer("/spec/tokenRequests").and_then(Value::as_array) {
                Some(t) => t
                    .iter()
                    .map(|t| s(t, "/audience"))
                    .collect::<Vec<_>>()
                    .join(","),
                None => "<unset>".into(),
            };
            let modes = strings(o, "/spec/volumeLifecycleModes");
            let modes = if modes.is_empty() {
                "<none>".to_string()
            } else {
                modes.join(",")
            };
            Row::of(vec![
                name(o),
                json!(bool_or(o, "/spec/attachRequired", true)),
                json!(bool_or(o, "/spec/podInfoOnMount", false)),
                json!(bool_or(o, "/spec/storageCapacity", false)),
                json!(tokens),
                json!(bool_or(o, "/spec/requiresRepublish", false)),
                json!(modes),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "storage.k8s.io",
        kind: "CSIStorageCapacity",
        columns: &[
            NAME,
            text("StorageClassName", "The storage class the capacity is for."),
            text("Capacity", "The reported capacity."),
        ],
        row: |o, _| {
            let cap = if has(o, "/capacity") {
                quantity(o, "/capacity")
            } else {
                "<unset>".into()
            };
            Row::of(vec![name(o), json!(s(o, "/storageClassName")), json!(cap)])
        },
    },
];

/// `Terminating` once deleted, else `status.phase`.
fn phase(o: &Value) -> &str {
    if has(o, "/metadata/deletionTimestamp") {
        "Terminating"
    } else {
        s(o, "/status/phase")
    }
}

fn persistent_volume(o: &Value, now: Timestamp) -> Row {
    let claim = match o.pointer("/spec/claimRef").filter(|c| !c.is_null()) {
        Some(c) => format!("{}/{}", s(c, "/namespace"), s(c, "/name")),
        None => String::new(),
    };
    let phase = phase(o);
    Row::of(vec![
        name(o),
        json!(quantity(o, "/spec/capacity/storage")),
        json!(access_modes(arr(o, "/spec/accessModes"))),
        json!(s(o, "/spec/persistentVolumeReclaimPolicy")),
        json!(phase),
        json!(claim),
        json!(class(o)),
        json!(or_unset(o, "/spec/volumeAttributesClassName")),
        json!(s(o, "/status/reason")),
        json!(age(o, now)),
        json!(or_unset(o, "/spec/volumeMode")),
    ])
}

fn persistent_volume_claim(o: &Value, now: Timestamp) -> Row {
    let phase = phase(o);
    let volume = s(o, "/spec/volumeName");
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            quantity(o, "/status/capacity/storage"),
            access_modes(arr(o, "/status/accessModes")),
        )
    };
    Row::of(vec![
        name(o),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(class(o)),
        json!(or_unset(o, "/spec/volumeAttributesClassName")),
        json!(age(o, now)),
        json!(or_unset(o, "/spec/volumeMode")),
    ])
}
