//! Printer columns: the columns and cells of the `Table` a real server sends `kubectl get`,
//! per kind, computed server-side the way upstream's printers compute them
//! (`pkg/printers/internalversion/printers.go` for built-ins, the CRD table convertor for
//! custom resources, the default table convertor for every other kind).
//!
//! - [`Column`], [`Row`], [`KindPrinter`] (a built-in kind's columns and row function) and
//!   [`Printer`], the printer of one served resource and version;
//! - one file per API group family: [`pod`] (the Pod status rules), [`core`], [`apps`],
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
pub(crate) mod core;
pub(crate) mod custom;
pub(crate) mod format;
pub(crate) mod jsonpath;
pub(crate) mod networking;
pub(crate) mod pod;
pub(crate) mod storage;
pub(crate) mod time;

use std::borrow::Cow;

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::kinds::resource_info::ResourceInfo;

/// Description of the `Name` column (the API documentation of `metadata.name`).
pub const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/// Description of `Age` and `Created At` columns (the API documentation of
/// `metadata.creationTimestamp`).
pub const AGE_DESC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One `columnDefinitions` entry of a `Table`.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    /// Column header (`kubectl` prints it upper-cased).
    pub name: Cow<'static, str>,
    /// OpenAPI type of the cells: `string`, `integer`, `number`, `boolean` or `date`.
    pub ty: Cow<'static, str>,
    /// OpenAPI format (`name` for the object name column, else usually empty).
    pub format: Cow<'static, str>,
    /// What the column shows.
    pub description: Cow<'static, str>,
    /// 0: always shown; higher: shown by `kubectl get -o wide` only.
    pub priority: i64,
}

/// A column shown by default.
pub const fn col(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name: Cow::Borrowed(name),
        ty: Cow::Borrowed(ty),
        format: Cow::Borrowed(""),
        description: Cow::Borrowed(description),
        priority: 0,
    }
}

/// A column shown only with `-o wide` (priority 1).
pub const fn wide(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name: Cow::Borrowed(name),
        ty: Cow::Borrowed(ty),
        format: Cow::Borrowed(""),
        description: Cow::Borrowed(description),
        priority: 1,
    }
}

/// A column shown by default whose cells are object names (format `name`).
pub const fn named(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    Column {
        name: Cow::Borrowed(name),
        ty: Cow::Borrowed(ty),
        format: Cow::Borrowed("name"),
        description: Cow::Borrowed(description),
        priority: 0,
    }
}

/// The `Name` column (type string, format name).
pub const NAME: Column = named("Name", "string", NAME_DESC);

/// The `Age` column.
pub const AGE: Column = col("Age", "string", AGE_DESC);

/// Names of each container in a pod template (the wide `Containers` column).
pub const CONTAINERS: Column = wide(
    "Containers",
    "string",
    "Names of each container in the template.",
);

/// Images of each container in a pod template (the wide `Images` column).
pub const IMAGES: Column = wide(
    "Images",
    "string",
    "Images referenced by each container in the template.",
);

/// One `rows` entry of a `Table`, without its object.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// One cell per column, in column order.
    pub cells: Vec<Value>,
    /// `conditions` of the row (a completed Pod is marked `Completed`).
    pub conditions: Vec<Value>,
}

impl Row {
    /// A row with cells and no conditions.
    pub fn of(cells: Vec<Value>) -> Self {
        Self {
            cells,
            conditions: Vec::new(),
        }
    }
}

/// Computes the cells of one object of a built-in kind, at time `now`.
pub type RowFn = fn(&Value, Timestamp) -> Row;

/// The printer of one built-in kind: its group and kind, columns and row function.
pub struct KindPrinter {
    /// API group ("" for core).
    pub group: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Every column, wide ones included (a server always sends them all).
    pub columns: &'static [Column],
    /// The cells of one object.
    pub row: RowFn,
}

/// Every built-in printer, by group family.
const FAMILIES: &[&[KindPrinter]] = &[
    pod::KINDS,
    core::KINDS,
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
    col("Name", "string", NAME_DESC),
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
            Printer::Scale => Row::of(vec![
                json!(format::s(obj, "/metadata/name")),
                json!(format::int(obj, "/spec/replicas")),
                json!(format::int(obj, "/status/replicas")),
                json!(time::age(obj, now)),
            ]),
            Printer::Default => Row::of(vec![
                json!(format::s(obj, "/metadata/name")),
                json!(created_at(obj)),
            ]),
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

/// The `Created At` cell: RFC 3339 in UTC, whole seconds (the zero time when unset).
fn created_at(obj: &Value) -> String {
    time::parse(obj.pointer("/metadata/creationTimestamp")).map_or_else(
        || "0001-01-01T00:00:00Z".to_string(),
        |t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )
}
