//! Printer columns: the columns and cells of the `Table` a real server sends `kubectl get`,
//! per kind, computed server-side the way upstream's printers compute them
//! (`pkg/printers/internalversion/printers.go` for built-ins, the CRD table convertor for
//! custom resources, the default table convertor for every other kind).
//!
//! - [`column`]: [`Column`], [`Row`], [`KindPrinter`] (a built-in kind's columns and row
//!   function); here [`Printer`], the printer of one served resource and version;
//! - one file per API group family: [`pod`] (the Pod status rules), [`core`], [`services`]
//!   (Service, Endpoints), [`events`] (core and events.k8s.io Events), [`apps`],
//!   [`batch`], [`networking`], [`storage`], [`autoscaling`], [`admission`] (admission,
//!   flow control, storage versions), [`cluster`] (coordination, scheduling, node, RBAC,
//!   certificates, dynamic resources, aggregation);
//! - [`custom`]: `additionalPrinterColumns` of CRDs, evaluated with [`jsonpath`];
//! - [`time`] and [`format`]: relative times and the shared text forms.

pub(crate) mod admission;
pub(crate) mod apps;
pub(crate) mod autoscaling;
pub(crate) mod batch;
pub(crate) mod cluster;
pub(crate) mod column;
pub(crate) mod core;
pub(crate) mod custom;
pub(crate) mod events;
pub(crate) mod format;
pub(crate) mod jsonpath;
pub(crate) mod networking;
pub(crate) mod pod;
pub(crate) mod services;
pub(crate) mod storage;
pub(crate) mod time;

use jiff::Timestamp;
use serde_json::{Value, json};

use self::column::Cell::{Age, Int, Name, Of};
use self::column::{AGE, AGE_DESC, KindPrinter, NAME, NAME_DESC, col, text};
pub use self::column::{Column, Row};
use crate::machinery::resource_info::ResourceInfo;

/// Every built-in printer, by group family.
const FAMILIES: &[&[KindPrinter]] = &[
    pod::KINDS,
    core::KINDS,
    services::KINDS,
    events::KINDS,
    apps::KINDS,
    batch::KINDS,
    networking::KINDS,
    storage::KINDS,
    autoscaling::KINDS,
    admission::KINDS,
    cluster::KINDS,
];

/// The built-in printer of a group and kind, if upstream has one.
pub fn builtin(group: &str, kind: &str) -> Option<&'static KindPrinter> {
    FAMILIES
        .iter()
        .flat_map(|f| f.iter())
        .find(|p| p.group == group && p.kind == kind)
}

/// How the rows of one served resource and version are computed.
pub enum Printer {
    /// A built-in kind with an upstream printer.
    Kind(&'static KindPrinter),
    /// A custom resource: `Name` plus the CRD's printer columns.
    Custom(custom::CustomPrinter),
    /// The `Scale` subresource.
    Scale,
    /// Upstream's default table convertor: `Name` and `Created At`.
    Default,
}

const DEFAULT_COLUMNS: &[Column] = &[NAME, col("Created At", "date", AGE_DESC)];

const SCALE_COLUMNS: &[Column] = &[
    text("Name", NAME_DESC),
    col("Desired", "integer", "Desired number of replicas."),
    col(
        "Available",
        "integer",
        "Actual number of observed replicas.",
    ),
    AGE,
];

impl Printer {
    /// The printer of a served resource at a version.
    pub fn for_resource(info: &ResourceInfo, version: &str) -> Self {
        if !info.builtin {
            return Printer::Custom(custom::CustomPrinter::for_version(info, version));
        }
        builtin(&info.group, &info.kind).map_or(Printer::Default, Printer::Kind)
    }

    /// The columns, in order.
    pub fn columns(&self) -> &[Column] {
        match self {
            Printer::Kind(k) => k.columns,
            Printer::Custom(c) => c.columns(),
            Printer::Scale => SCALE_COLUMNS,
            Printer::Default => DEFAULT_COLUMNS,
        }
    }

    /// The row of one object, at time `now`.
    pub fn row(&self, obj: &Value, now: Timestamp) -> Row {
        match self {
            Printer::Kind(k) => (k.row)(obj, now),
            Printer::Custom(c) => c.row(obj, now),
            Printer::Scale => {
                let cells = [Name, Int("/spec/replicas"), Int("/status/replicas"), Age];
                Row::cells(obj, now, &cells)
            }
            Printer::Default => Row::cells(obj, now, &[Name, Of(created_at)]),
        }
    }

    /// Whether the columns go out even where a watch leaves them out after its first event
    /// (the aggregator's APIService convertor always sends them).
    pub fn always_headers(&self) -> bool {
        matches!(self, Printer::Kind(k) if k.group == "apiregistration.k8s.io")
    }

    /// Whether an empty list has `"rows": null` (the default convertor never allocates its
    /// rows) rather than `[]`.
    pub fn null_when_empty(&self) -> bool {
        matches!(self, Printer::Default)
    }
}

#[cfg(test)]
mod cluster_tests;
#[cfg(test)]
mod tests;

/// The `Created At` cell: RFC 3339 in UTC, whole seconds (the zero time when unset).
fn created_at(obj: &Value) -> Value {
    json!(
        time::parse(obj.pointer("/metadata/creationTimestamp")).map_or_else(
            || "0001-01-01T00:00:00Z".to_string(),
            |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        )
    )
}
