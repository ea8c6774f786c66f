//! Custom resources' tables: `Name`, then the `additionalPrinterColumns` of the served
//! version (or, when it declares none, an `Age` column of type date), each cell evaluated
//! from the column's JSONPath and converted to the column's type (apiextensions-apiserver
//! `tableconvertor`); and the static validation of those columns in a CRD.

use std::borrow::Cow;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::column::{AGE_DESC, Column, NAME, Row};
use super::format::s;
use super::jsonpath::JsonPath;
use super::time;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{Cause, invalid_value, required};

/// The printer of one custom resource version.
pub struct CustomPrinter {
    columns: Vec<Column>,
    paths: Vec<JsonPath>,
}

const TYPES: &[&str] = &["boolean", "date", "integer", "number", "string"];
const FORMATS: &[&str] = &[
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];

impl CustomPrinter {
    /// The printer of a served version of a custom resource.
    pub fn for_version(info: &ResourceInfo, version: &str) -> Self {
        let cols = info
            .printer_columns
            .iter()
            .find(|(v, _)| v == version)
            .and_then(|(_, c)| c.as_array())
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        Self::new(cols)
    }

    /// A printer from `additionalPrinterColumns`. A column whose path does not parse ends
    /// the list there: upstream keeps the columns built so far and logs the error.
    pub fn new(cols: &[Value]) -> Self {
        let default_age = [
            json!({"name": "Age", "type": "date", "description": AGE_DESC,
            "jsonPath": ".metadata.creationTimestamp"}),
        ];
        let cols = if cols.is_empty() {
            &default_age[..]
        } else {
            cols
        };
        let mut columns = vec![NAME];
        let mut paths = Vec::new();
        for c in cols {
            let path_text = s(c, "/jsonPath");
            let Ok(path) = JsonPath::parse(path_text) else {
                tracing::debug!(
                    path = path_text,
                    "invalid printer column; later columns dropped"
                );
                break;
            };
            let description = match s(c, "/description") {
                "" => {
                    format!("Custom resource definition column (in JSONPath format): {path_text}")
                }
                d => d.to_string(),
            };
            columns.push(Column {
                name: Cow::Owned(s(c, "/name").to_string()),
                ty: Cow::Owned(s(c, "/type").to_string()),
                format: Cow::Owned(s(c, "/format").to_string()),
                description: Cow::Owned(description),
                priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
            });
            paths.push(path);
        }
        Self { columns, paths }
    }

    /// `Name` and the printer columns.
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The cells of one object: null where the path selects nothing.
    pub fn row(&self, obj: &Value, now: Timestamp) -> Row {
        let mut cells = vec![json!(s(obj, "/metadata/name"))];
        for (path, col) in self.paths.iter().zip(&self.columns[1..]) {
            let cell = path
                .find(obj)
                .first()
                .map_or(Value::Null, |v| cell(&col.ty, v, now));
            cells.push(cell);
        }
        Row::of(cells)
    }
}

/// A whole float as an integer JSON number (Go prints `3`, not `3.0`).
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        json!(f as i64)
    } else {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// A float as Go's `%v` prints it: shortest form, exponent below 1e-4 and from 1e21.
fn go_float(f: f64) -> String {
    let a = f.abs();
    if a != 0.0 && !(1e-4..1e21).contains(&a) {
        let e = format!("{f:e}");
        let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let exp: i32 = exp.parse().unwrap_or(0);
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// A value as the `string` column type prints it (JSONPath text output).
fn text(v: &Value) -> Value {
    match v {
        Value::Null => Value::Null,
        Value::String(s) => json!(s),
        Value::Bool(b) => json!(b.to_string()),
        Value::Number(n) => match n.as_i64() {
            Some(i) => json!(i.to_string()),
            None => json!(n.as_f64().map_or_else(|| n.to_string(), go_float)),
        },
        other => json!(other.to_string()),
    }
}

/// A cell of the column's type; null when the value does not fit it.
fn cell(ty: &str, v: &Value, now: Timestamp) -> Value {
    match (ty, v) {
        ("string", v) => text(v),
        ("integer", Value::Number(n)) => n
            .as_i64()
            .map(Value::from)
            .or_else(|| n.as_f64().map(|f| json!(f as i64)))
            .unwrap_or(Value::Null),
        ("number", Value::Number(n)) => n.as_f64().map_or(Value::Null, number),
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) => match s.parse::<Timestamp>() {
            Ok(t) => json!(time::human_duration(time::between(t, now))),
            Err(_) => json!("<invalid>"),
        },
        _ => Value::Null,
    }
}

/// Static validation of every version's `additionalPrinterColumns` (upstream
/// `ValidateCustomResourceColumnDefinition`): a name, a known type and format, and a
/// JSONPath starting with a dot.
pub fn validate(crd: &Value) -> Vec<Cause> {
    let mut out = Vec::new();
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for (i, v) in versions.iter().enumerate() {
        let cols = v
            .get("additionalPrinterColumns")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for (j, c) in cols.iter().enumerate() {
            let at = |f: &str| format!("spec.versions[{i}].additionalPrinterColumns[{j}].{f}");
            if s(c, "/name").is_empty() {
                out.push(required(&at("name"), ""));
            }
            let one_of = |list: &[&str]| format!("must be one of {}", list.join(","));
            match s(c, "/type") {
                "" => out.push(required(&at("type"), &one_of(TYPES))),
                t if !TYPES.contains(&t) => out.push(invalid_value(&at("type"), t, &one_of(TYPES))),
                _ => {}
            }
            match s(c, "/format") {
                "" => {}
                f if !FORMATS.contains(&f) => {
                    out.push(invalid_value(&at("format"), f, &one_of(FORMATS)))
                }
                _ => {}
            }
            match s(c, "/jsonPath") {
                "" => out.push(required(&at("JSONPath"), "")),
                p if !p.starts_with('.') => out.push(invalid_value(
                    &at("JSONPath"),
                    p,
                    "must be a simple json path starting with .",
                )),
                _ => {}
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_column_types() {
        let now = Timestamp::now();
        assert_eq!(cell("integer", &json!(2.7), now), json!(2));
        assert_eq!(cell("integer", &json!("2"), now), Value::Null);
        assert_eq!(cell("number", &json!(3), now), json!(3));
        assert_eq!(cell("number", &json!(1.5), now), json!(1.5));
        assert_eq!(cell("boolean", &json!(true), now), json!(true));
        assert_eq!(cell("date", &json!("yesterday"), now), json!("<invalid>"));
        assert_eq!(cell("string", &json!(5), now), json!("5"));
        assert_eq!(cell("string", &json!(0.5), now), json!("0.5"));
        assert_eq!(cell("string", &json!(1e21), now), json!("1e+21"));
        assert_eq!(
            cell("string", &json!({"b": 1, "a": [true]}), now),
            json!("{\"a\":[true],\"b\":1}")
        );
    }

    #[test]
    fn a_bad_path_drops_it_and_later_columns() {
        let p = CustomPrinter::new(&[
            json!({"name": "A", "type": "string", "jsonPath": ".spec.a"}),
            json!({"name": "B", "type": "string", "jsonPath": ".spec[b"}),
            json!({"name": "C", "type": "string", "jsonPath": ".spec.c"}),
        ]);
        let names: Vec<&str> = p.columns().iter().map(|c| c.name.as_ref()).collect();
        assert_eq!(names, ["Name", "A"]);
    }
}
