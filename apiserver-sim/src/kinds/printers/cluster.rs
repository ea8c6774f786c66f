//! Printers of cluster-wide and scheduling-related kinds: coordination.k8s.io Lease and
//! LeaseCandidate, scheduling.k8s.io PriorityClass, node.k8s.io RuntimeClass, policy
//! PodDisruptionBudget, RBAC role bindings, certificates.k8s.io kinds, resource.k8s.io
//! (dynamic resource allocation) kinds and the aggregator's APIService.

use serde_json::{Value, json};

use super::column::Cell::{Age, Int, Name, Of, Str};
use super::column::{AGE, Column, KindPrinter, NAME, Row, col, text, wide};
use super::format::{arr, has, int_or_string, name, s};
use super::time::{self, age};

const RBAC: &str = "rbac.authorization.k8s.io";
const RESOURCE: &str = "resource.k8s.io";

const BINDING_COLUMNS: &[Column] = &[
    NAME,
    text("Role", "The role the subjects are bound to."),
    AGE,
    wide("Users", "Users in the binding"),
    wide("Groups", "Groups in the binding"),
    wide("ServiceAccounts", "ServiceAccounts in the binding"),
];

fn role_binding(o: &Value, now: jiff::Timestamp) -> Row {
    let (mut users, mut groups, mut sas) = (Vec::new(), Vec::new(), Vec::new());
    for sub in arr(o, "/subjects") {
        match s(sub, "/kind") {
            "ServiceAccount" => sas.push(format!("{}/{}", s(sub, "/namespace"), s(sub, "/name"))),
            "User" => users.push(s(sub, "/name").to_string()),
            "Group" => groups.push(s(sub, "/name").to_string()),
            _ => {}
        }
    }
    let role = format!("{}/{}", s(o, "/roleRef/kind"), s(o, "/roleRef/name"));
    Row::of(vec![
        name(o),
        json!(role),
        json!(age(o, now)),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(sas.join(", ")),
    ])
}

/// `Approved`/`Denied`/`Pending`, then `,Failed` and `,Issued` (upstream order of precedence).
fn csr_status(o: &Value) -> String {
    let has_condition = |t: &str| {
        arr(o, "/status/conditions")
            .iter()
            .any(|c| s(c, "/type") == t)
    };
    let mut status = if has_condition("Denied") {
        "Denied".to_string()
    } else if has_condition("Approved") {
        "Approved".to_string()
    } else {
        "Pending".to_string()
    };
    if has_condition("Failed") {
        status.push_str(",Failed");
    }
    if !s(o, "/status/certificate").is_empty() {
        status.push_str(",Issued");
    }
    status
}

fn claim_state(o: &Value) -> String {
    let deleted = has(o, "/metadata/deletionTimestamp");
    let mut states = Vec::new();
    if deleted {
        states.push("deleted");
    }
    if !has(o, "/status/allocation") {
        if !deleted {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if !arr(o, "/status/reservedFor").is_empty() {
            states.push("reserved");
        }
    }
    states.join(",")
}

fn api_service_available(o: &Value) -> String {
    let Some(c) = arr(o, "/status/conditions")
        .iter()
        .find(|c| s(c, "/type") == "Available")
    else {
        return "Unknown".into();
    };
    match (s(c, "/status"), s(c, "/reason")) {
        ("True", _) => "True".into(),
        (st, "") => st.into(),
        (st, reason) => format!("{st} ({reason})"),
    }
}

/// An int-or-string at a JSON pointer, `N/A` when absent.
fn or_na(o: &Value, ptr: &str) -> Value {
    json!(int_or_string(o.pointer(ptr)).unwrap_or_else(|| "N/A".into()))
}

fn name_age(o: &Value, now: jiff::Timestamp) -> Row {
    Row::cells(o, now, &[Name, Age])
}

/// A signer name, `<none>` when empty.
fn signer(o: &Value) -> Value {
    json!(match s(o, "/spec/signerName") {
        "" => "<none>",
        n => n,
    })
}

/// Printers of cluster-wide and scheduling-related kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: "coordination.k8s.io",
        kind: "Lease",
        columns: &[
            NAME,
            text("Holder", "The identity of the lease holder."),
            AGE,
        ],
        row: |o, now| Row::cells(o, now, &[Name, Str("/spec/holderIdentity"), Age]),
    },
    KindPrinter {
        group: "coordination.k8s.io",
        kind: "LeaseCandidate",
        columns: &[
            NAME,
            text("LeaseName", "The lease the candidate runs for."),
            text("BinaryVersion", "The binary version of the candidate."),
            text(
                "EmulationVersion",
                "The emulation version of the candidate.",
            ),
            AGE,
        ],
        row: |o, now| {
            let cells = [
                Name,
                Str("/spec/leaseName"),
                Str("/spec/binaryVersion"),
                Str("/spec/emulationVersion"),
                Age,
            ];
            Row::cells(o, now, &cells)
        },
    },
    KindPrinter {
        group: "scheduling.k8s.io",
        kind: "PriorityClass",
        columns: &[
            NAME,
            col("Value", "integer", "The priority of pods of this class."),
            col(
                "Global-Default",
                "boolean",
                "Whether this class is the default.",
            ),
            AGE,
            text(
                "PreemptionPolicy",
                "Whether pods of this class preempt others.",
            ),
        ],
        row: |o, now| {
            let default = Of(|o| json!(o["globalDefault"].as_bool().unwrap_or(false)));
            let cells = [Name, Int("/value"), default, Age, Str("/preemptionPolicy")];
            Row::cells(o, now, &cells)
        },
    },
    KindPrinter {
        group: "node.k8s.io",
        kind: "RuntimeClass",
        columns: &[NAME, text("Handler", "The container runtime handler."), AGE],
        row: |o, now| Row::cells(o, now, &[Name, Str("/handler"), Age]),
    },
    KindPrinter {
        group: "policy",
        kind: "PodDisruptionBudget",
        columns: &[
            NAME,
            text(
                "Min Available",
                "The minimum number of pods that must be available.",
            ),
            text(
                "Max Unavailable",
                "The maximum number of pods that may be unavailable.",
            ),
            col(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.",
            ),
            AGE,
        ],
        row: |o, now| {
            let min = Of(|o| or_na(o, "/spec/minAvailable"));
            let max = Of(|o| or_na(o, "/spec/maxUnavailable"));
            Row::cells(
                o,
                now,
                &[Name, min, max, Int("/status/disruptionsAllowed"), Age],
            )
        },
    },
    KindPrinter {
        group: RBAC,
        kind: "RoleBinding",
        columns: BINDING_COLUMNS,
        row: role_binding,
    },
    KindPrinter {
        group: RBAC,
        kind: "ClusterRoleBinding",
        columns: BINDING_COLUMNS,
        row: role_binding,
    },
    KindPrinter {
        group: "certificates.k8s.io",
        kind: "CertificateSigningRequest",
        columns: &[
            NAME,
            AGE,
            text("SignerName", "The signer the request is for."),
            text("Requestor", "The user who created the request."),
            text(
                "RequestedDuration",
                "The requested validity of the certificate.",
            ),
            text(
                "Condition",
                "Whether the request is approved, denied, failed or issued.",
            ),
        ],
        row: |o, now| {
            let duration = o
                .pointer("/spec/expirationSeconds")
                .and_then(Value::as_i64)
                .map_or_else(
                    || "<none>".to_string(),
                    |secs| time::human_duration(i128::from(secs) * 1_000_000_000),
                );
            Row::of(vec![
                name(o),
                json!(age(o, now)),
                signer(o),
                json!(s(o, "/spec/username")),
                json!(duration),
                json!(csr_status(o)),
            ])
        },
    },
    KindPrinter {
        group: "certificates.k8s.io",
        kind: "ClusterTrustBundle",
        columns: &[NAME, text("SignerName", "The signer of the bundle.")],
        row: |o, now| Row::cells(o, now, &[Name, Of(signer)]),
    },
    KindPrinter {
        group: RESOURCE,
        kind: "DeviceClass",
        columns: &[NAME, AGE],
        row: name_age,
    },
    KindPrinter {
        group: RESOURCE,
        kind: "ResourceClaim",
        columns: &[
            NAME,
            text(
                "State",
                "A summary of the current state (allocated, pending, reserved, etc.).",
            ),
            AGE,
        ],
        row: |o, now| Row::cells(o, now, &[Name, Of(|o| json!(claim_state(o))), Age]),
    },
    KindPrinter {
        group: RESOURCE,
        kind: "ResourceClaimTemplate",
        columns: &[NAME, AGE],
        row: name_age,
    },
    KindPrinter {
        group: RESOURCE,
        kind: "ResourceSlice",
        columns: &[
            NAME,
            text("Node", "The node the devices are on."),
            text("Driver", "The driver of the devices."),
            text("Pool", "The pool the slice belongs to."),
            AGE,
        ],
        row: |o, now| {
            let cells = [
                Name,
                Str("/spec/nodeName"),
                Str("/spec/driver"),
                Str("/spec/pool/name"),
                Age,
            ];
            Row::cells(o, now, &cells)
        },
    },
    KindPrinter {
        group: "apiregistration.k8s.io",
        kind: "APIService",
        columns: &[
            NAME,
            text(
                "Service",
                "The reference to the service that hosts this API endpoint.",
            ),
            text("Available", "Whether this service is available."),
            AGE,
        ],
        row: |o, now| {
            let service = match o.pointer("/spec/service").filter(|v| !v.is_null()) {
                Some(svc) => format!("{}/{}", s(svc, "/namespace"), s(svc, "/name")),
                None => "Local".into(),
            };
            Row::of(vec![
                name(o),
                json!(service),
                json!(api_service_available(o)),
                json!(age(o, now)),
            ])
        },
    },
];
