//! Printers of admissionregistration.k8s.io kinds (webhook configurations, admission
//! policies and their bindings), flowcontrol.apiserver.k8s.io kinds (FlowSchema,
//! PriorityLevelConfiguration), internal.apiserver.k8s.io StorageVersion and
//! storagemigration.k8s.io StorageVersionMigration.

use serde_json::{Value, json};

use super::column::Cell::{Age, Len, Name, Of, Str};
use super::column::{AGE, Column, KindPrinter, NAME, Row, col, text};
use super::format::{arr, int, list_with_more, name, s, selector};
use super::time::age;

const ADMISSION: &str = "admissionregistration.k8s.io";
const FLOW: &str = "flowcontrol.apiserver.k8s.io";

const WEBHOOK_COLUMNS: &[Column] = &[
    NAME,
    col(
        "Webhooks",
        "integer",
        "Webhooks indicates the number of webhooks registered in this configuration",
    ),
    AGE,
];

/// A policy's parameter kind.
const PARAM_KIND: Column = text(
    "ParamKind",
    "ParamKind specifies the kind of resources used to parameterize this policy",
);

const BINDING_COLUMNS: &[Column] = &[
    NAME,
    text(
        "PolicyName",
        "PolicyName indicates the policy definition which the policy binding binded to",
    ),
    text(
        "ParamRef",
        "ParamRef indicates the param resource which sets the configration param",
    ),
    AGE,
];

/// `apiVersion/kind` of a policy's parameter kind, or `<unset>`.
fn param_kind(o: &Value) -> String {
    match o.pointer("/spec/paramKind").filter(|p| !p.is_null()) {
        Some(p) => format!("{}/{}", s(p, "/apiVersion"), s(p, "/kind")),
        None => "<unset>".into(),
    }
}

/// A binding's parameter reference: `namespace/name`, `*/name`, a selector, or `<unset>`.
fn param_ref(o: &Value) -> String {
    let Some(p) = o.pointer("/spec/paramRef").filter(|p| !p.is_null()) else {
        return "<unset>".into();
    };
    match (s(p, "/name"), s(p, "/namespace")) {
        ("", _) => match p.get("selector").filter(|v| !v.is_null()) {
            Some(sel) => selector(Some(sel)).unwrap_or_default(),
            None => "<unset>".into(),
        },
        (n, "") => format!("*/{n}"),
        (n, ns) => format!("{ns}/{n}"),
    }
}

fn binding(o: &Value, now: jiff::Timestamp) -> Row {
    let param_ref = Of(|o| json!(param_ref(o)));
    Row::cells(o, now, &[Name, Str("/spec/policyName"), param_ref, Age])
}

fn webhook_configuration(o: &Value, now: jiff::Timestamp) -> Row {
    Row::cells(o, now, &[Name, Len("/webhooks"), Age])
}

/// A policy's row: its name, the number of entries of `list`, its parameter kind, its age.
fn policy(o: &Value, now: jiff::Timestamp, list: &'static str) -> Row {
    Row::cells(
        o,
        now,
        &[Name, Len(list), Of(|o| json!(param_kind(o))), Age],
    )
}

/// `<none>` or the integer at a pointer (cells of mixed type, as upstream).
fn int_or_none(o: Option<&Value>, ptr: &str) -> Value {
    o.and_then(|o| o.pointer(ptr))
        .and_then(Value::as_i64)
        .map_or_else(|| json!("<none>"), |v| json!(v))
}

/// Printers of admission, flow control and storage version kinds.
pub(super) const KINDS: &[KindPrinter] = &[
    KindPrinter {
        group: ADMISSION,
        kind: "MutatingWebhookConfiguration",
        columns: WEBHOOK_COLUMNS,
        row: webhook_configuration,
    },
    KindPrinter {
        group: ADMISSION,
        kind: "ValidatingWebhookConfiguration",
        columns: WEBHOOK_COLUMNS,
        row: webhook_configuration,
    },
    KindPrinter {
        group: ADMISSION,
        kind: "ValidatingAdmissionPolicy",
        columns: &[
            NAME,
            col(
                "Validations",
                "integer",
                "Validations indicates the number of validation rules defined in this configuration",
            ),
            PARAM_KIND,
            AGE,
        ],
        row: |o, now| policy(o, now, "/spec/validations"),
    },
    KindPrinter {
        group: ADMISSION,
        kind: "ValidatingAdmissionPolicyBinding",
        columns: BINDING_COLUMNS,
        row: binding,
    },
    KindPrinter {
        group: ADMISSION,
        kind: "MutatingAdmissionPolicy",
        columns: &[
            NAME,
            col(
                "Mutations",
                "integer",
                "Mutation indicates the number of mutations rules defined in this configuration",
            ),
            PARAM_KIND,
            AGE,
        ],
        row: |o, now| policy(o, now, "/spec/mutations"),
    },
    KindPrinter {
        group: ADMISSION,
        kind: "MutatingAdmissionPolicyBinding",
        columns: BINDING_COLUMNS,
        row: binding,
    },
    KindPrinter {
        group: FLOW,
        kind: "FlowSchema",
        columns: &[
            NAME,
            text(
                "PriorityLevel",
                "The priority level requests of this schema go to.",
            ),
            text("MatchingPrecedence", "Lower values match first."),
            text(
                "DistinguisherMethod",
                "How flows of this schema are told apart.",
            ),
            AGE,
            text(
                "MissingPL",
                "references a broken or non-existent PriorityLevelConfiguration",
            ),
        ],
        row: |o, now| {
            let dangling = arr(o, "/status/conditions")
                .iter()
                .find(|c| s(c, "/type") == "Dangling")
                .map_or("?", |c| s(c, "/status"));
            let method = o
                .pointer("/spec/distinguisherMethod/type")
                .and_then(Value::as_str)
                .unwrap_or("<none>");
            Row::of(vec![
                name(o),
                json!(s(o, "/spec/priorityLevelConfiguration/name")),
                json!(int(o, "/spec/matchingPrecedence")),
                json!(method),
                json!(age(o, now)),
                json!(dangling),
            ])
        },
    },
    KindPrinter {
        group: FLOW,
        kind: "PriorityLevelConfiguration",
        columns: &[
            NAME,
            text("Type", "Whether the level is exempt or limited."),
            text(
                "NominalConcurrencyShares",
                "The level's share of the server's concurrency.",
            ),
            text("Queues", "The number of queues of the level."),
            text("HandSize", "The number of queues a flow is shuffled over."),
            text("QueueLengthLimit", "The longest a queue may get."),
            AGE,
        ],
        row: |o, now| {
            let limited = o.pointer("/spec/limited").filter(|v| !v.is_null());
            let queuing = limited
                .and_then(|l| l.pointer("/limitResponse/queuing"))
                .filter(|v| !v.is_null());
            let ncs = match limited {
                Some(l) => json!(int(l, "/nominalConcurrencyShares")),
                None => json!("<none>"),
            };
            Row::of(vec![
                name(o),
                json!(s(o, "/spec/type")),
                ncs,
                int_or_none(queuing, "/queues"),
                int_or_none(queuing, "/handSize"),
                int_or_none(queuing, "/queueLengthLimit"),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "internal.apiserver.k8s.io",
        kind: "StorageVersion",
        columns: &[
            NAME,
            text(
                "CommonEncodingVersion",
                "The encoding version every API server agrees on.",
            ),
            text(
                "StorageVersions",
                "The encoding version of each API server.",
            ),
            AGE,
        ],
        row: |o, now| {
            let versions: Vec<String> = arr(o, "/status/storageVersions")
                .iter()
                .map(|v| format!("{}={}", s(v, "/apiServerID"), s(v, "/encodingVersion")))
                .collect();
            let common = o
                .pointer("/status/commonEncodingVersion")
                .and_then(Value::as_str)
                .unwrap_or("<unset>");
            Row::of(vec![
                name(o),
                json!(common),
                json!(list_with_more(&versions, 3)),
                json!(age(o, now)),
            ])
        },
    },
    KindPrinter {
        group: "storagemigration.k8s.io",
        kind: "StorageVersionMigration",
        columns: &[
            text("Name", super::column::NAME_DESC),
            text("Resource", "Fully qualified resource to migrate"),
        ],
        row: |o, _| {
            let gvr = format!(
                "{}.{}.{}",
                s(o, "/spec/resource/resource"),
                s(o, "/spec/resource/version"),
                s(o, "/spec/resource/group")
            );
            Row::of(vec![name(o), json!(gvr)])
        },
    },
];
