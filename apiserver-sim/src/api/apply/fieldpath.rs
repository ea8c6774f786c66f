//! Field paths as server-side apply names them: a [`PathElement`] picks a child of a value
//! (a field of a map, an item of a list by its keys, by its value, or by its index), and a
//! [`Path`] is a sequence of them from the object's root.
//!
//! The order of path elements follows structured-merge-diff (fields, then keyed items, then
//! set values, then indices; values compared numerically, then as strings, booleans, lists,
//! maps, null), because managed field sets and conflict lists are sorted by it.

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// One step from a value to one of its children.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PathElement {
    /// A field of a map (`f:<name>`).
    Field(String),
    /// An item of an associative list, by its key fields sorted by name (`k:{...}`).
    Key(Vec<(String, Value)>),
    /// An item of a set, by its value (`v:<json>`).
    Value(Value),
    /// An item of an atomic list, by position (`i:<n>`).
    Index(usize),
}

/// A path from the object's root.
pub(crate) type Path = Vec<PathElement>;

impl PathElement {
    /// A field element.
    pub(crate) fn field(name: &str) -> Self {
        PathElement::Field(name.to_string())
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

impl Eq for PathElement {}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => cmp_key(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => cmp_value(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Key field lists compare lexically: name, then value, field by field; shorter first.
fn cmp_key(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for ((an, av), (bn, bv)) in a.iter().zip(b) {
        let c = an.cmp(bn).then_with(|| cmp_value(av, bv));
        if c != Ordering::Equal {
            return c;
        }
    }
    a.len().cmp(&b.len())
}

fn value_rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// A total order on JSON values: numbers (compared numerically), strings, booleans, lists,
/// maps, null.
pub(crate) fn cmp_value(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i.cmp(&j),
            _ => {
                let (f, g) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                f.partial_cmp(&g).unwrap_or(Ordering::Equal)
            }
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (i, j) in x.iter().zip(y) {
                let c = cmp_value(i, j);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            let mut xs: Vec<(&String, &Value)> = x.iter().collect();
            let mut ys: Vec<(&String, &Value)> = y.iter().collect();
            xs.sort_by(|p, q| p.0.cmp(q.0));
            ys.sort_by(|p, q| p.0.cmp(q.0));
            for ((xn, xv), (yn, yv)) in xs.iter().zip(&ys) {
                let c = xn.cmp(yn).then_with(|| cmp_value(xv, yv));
                if c != Ordering::Equal {
                    return c;
                }
            }
            xs.len().cmp(&ys.len())
        }
        _ => value_rank(a).cmp(&value_rank(b)),
    }
}

/// A value as conflict messages print it: strings quoted, everything else as JSON.
fn display_value(v: &Value) -> String {
    match v {
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(display_value).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", display_value(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", display_value(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path as conflict causes name it, e.g. `.spec.containers[name="app"].image`.
pub(crate) fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

/// JSON text as the real server writes it inside `k:`/`v:` names: compact, with `<`, `>`
/// and `&` escaped.
pub(crate) fn go_json(v: &Value) -> String {
    let text = v.to_string();
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text;
    }
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

impl PathElement {
    /// The element's name in a FieldsV1 document (`f:name`, `k:{...}`, `v:...`, `i:n`).
    pub(crate) fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => format!("f:{name}"),
            PathElement::Key(fields) => {
                let map: serde_json::Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", go_json(&Value::Object(map)))
            }
            PathElement::Value(v) => format!("v:{}", go_json(v)),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a FieldsV1 name (not `.`); `None` when malformed.
    pub(crate) fn decode(name: &str) -> Option<Self> {
        let (kind, rest) = name.split_at_checked(2)?;
        match kind {
            "f:" => Some(PathElement::Field(rest.to_string())),
            "v:" => serde_json::from_str(rest).ok().map(PathElement::Value),
            "i:" => rest.parse().ok().map(PathElement::Index),
            "k:" => match serde_json::from_str(rest).ok()? {
                Value::Object(map) => {
                    let mut fields: Vec<(String, Value)> = map.into_iter().collect();
                    fields.sort_by(|a, b| a.0.cmp(&b.0));
                    Some(PathElement::Key(fields))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn order_encoding_and_display() {
        let key = |port: i64| {
            PathElement::Key(vec![
                ("containerPort".into(), json!(port)),
                ("protocol".into(), json!("TCP")),
            ])
        };
        let mut elems = [
            PathElement::Index(0),
            PathElement::Value(json!("b")),
            key(10),
            PathElement::field("b"),
            key(9),
            PathElement::field("a"),
        ];
        elems.sort();
        assert_eq!(elems[0], PathElement::field("a"));
        assert_eq!(elems[2], key(9), "keys compare numerically, not as text");
        assert_eq!(elems[5], PathElement::Index(0));
        assert_eq!(
            key(80).encode(),
            r#"k:{"containerPort":80,"protocol":"TCP"}"#
        );
        assert_eq!(PathElement::decode(&key(80).encode()), Some(key(80)));
        assert_eq!(
            PathElement::decode(r#"k:{"b":1,"a":2}"#),
            Some(PathElement::Key(vec![
                ("a".into(), json!(2)),
                ("b".into(), json!(1))
            ]))
        );
        assert_eq!(PathElement::decode("x:1"), None);
        assert_eq!(PathElement::decode("k:[1]"), None);
        assert_eq!(PathElement::Value(json!("a&b")).encode(), r#"v:"a\u0026b""#);
        let path = vec![
            PathElement::field("spec"),
            PathElement::field("containers"),
            PathElement::Key(vec![("name".into(), json!("app"))]),
            PathElement::field("image"),
        ];
        assert_eq!(path_string(&path), r#".spec.containers[name="app"].image"#);
        assert_eq!(
            path_string(&[PathElement::field("f"), PathElement::Value(json!(1))]),
            ".f[=1]"
        );
    }
}
