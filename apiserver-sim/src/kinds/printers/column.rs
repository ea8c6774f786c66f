//! The building blocks of printers: [`Column`] definitions (and the columns most kinds
//! share: `Name`, `Age`, the wide `Containers` and `Images`), [`Row`] cells and the
//! [`Cell`]s most rows are made of, and [`KindPrinter`], a built-in kind's columns and row
//! function.

use std::borrow::Cow;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::format::{arr, containers, int, len, s};
use super::time::age;

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

/// A column of cells of type `ty` and format `format`, shown from `priority` on.
const fn column(
    name: &'static str,
    ty: &'static str,
    format: &'static str,
    description: &'static str,
    priority: i64,
) -> Column {
    Column {
        name: Cow::Borrowed(name),
        ty: Cow::Borrowed(ty),
        format: Cow::Borrowed(format),
        description: Cow::Borrowed(description),
        priority,
    }
}

/// A column shown by default.
pub const fn col(name: &'static str, ty: &'static str, description: &'static str) -> Column {
    column(name, ty, "", description, 0)
}

/// A string column shown by default (the type of most columns).
pub const fn text(name: &'static str, description: &'static str) -> Column {
    col(name, "string", description)
}

/// A string column shown only with `-o wide` (priority 1).
pub const fn wide(name: &'static str, description: &'static str) -> Column {
    column(name, "string", "", description, 1)
}

/// A string column shown by default whose cells are object names (format `name`).
pub const fn named(name: &'static str, description: &'static str) -> Column {
    column(name, "string", "name", description, 0)
}

/// The `Name` column (type string, format name).
pub const NAME: Column = named("Name", NAME_DESC);

/// The `Age` column.
pub const AGE: Column = text("Age", AGE_DESC);

/// Names of each container in a pod template (the wide `Containers` column).
pub const CONTAINERS: Column = wide("Containers", "Names of each container in the template.");

/// Images of each container in a pod template (the wide `Images` column).
pub const IMAGES: Column = wide(
    "Images",
    "Images referenced by each container in the template.",
);

/// The wide `Selector` column of workloads.
pub const SELECTOR: Column = wide("Selector", "Label selector for pods.");

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

    /// The row of `o` at `now` made of `cells`.
    pub fn cells(o: &Value, now: Timestamp, cells: &[Cell]) -> Self {
        Self::of(cells.iter().map(|c| c.of(o, now)).collect())
    }
}

/// How one cell of a row is read from its object.
#[derive(Clone, Copy)]
pub enum Cell {
    /// `metadata.name`.
    Name,
    /// The time since `metadata.creationTimestamp`.
    Age,
    /// The string at a JSON pointer ("" when absent).
    Str(&'static str),
    /// The integer at a JSON pointer (0 when absent).
    Int(&'static str),
    /// The number of entries of the list or map at a JSON pointer.
    Len(&'static str),
    /// The names of the containers listed at a JSON pointer (`a,b`).
    Containers(&'static str),
    /// The images of the containers listed at a JSON pointer.
    Images(&'static str),
    /// Computed from the object.
    Of(fn(&Value) -> Value),
}

impl Cell {
    /// This cell of `o` at `now`.
    fn of(self, o: &Value, now: Timestamp) -> Value {
        match self {
            Cell::Name => json!(s(o, "/metadata/name")),
            Cell::Age => json!(age(o, now)),
            Cell::Str(ptr) => json!(s(o, ptr)),
            Cell::Int(ptr) => json!(int(o, ptr)),
            Cell::Len(ptr) => json!(len(o, ptr)),
            Cell::Containers(ptr) => json!(containers(arr(o, ptr)).0),
            Cell::Images(ptr) => json!(containers(arr(o, ptr)).1),
            Cell::Of(f) => f(o),
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
