//! YAML request bodies converted to JSON as kube-apiserver converts them: sigs.k8s.io/yaml
//! over go-yaml v2, so YAML 1.1's resolution of plain scalars (a bare `y`, `yes`, `on` is
//! `true`; `0777` is octal), quoted scalars always strings, the first document only, anchors,
//! aliases and `<<` merge keys, later duplicate keys winning, and non-string keys written as
//! strings. [`to_json`] gives the value, or the error text upstream gives in its place.
//!
//! The YAML is parsed by `saphyr-parser`'s event parser (which reports each scalar's
//! style); [`resolve`] says what each scalar is; [`tree`] holds the parsed document.

mod resolve;
mod tree;

#[cfg(test)]
mod tests;

use serde_json::{Map, Number, Value};

use self::resolve::{Hint, Scalar, resolve};
use self::tree::{Node, Tree};
use crate::machinery::go_fmt::{go_float32, go_sharp_format};

/// Deepest nesting of collections read (the simulator's JSON reader's limit too).
const MAX_DEPTH: usize = 128;

/// The JSON value of a YAML document, or the error upstream's conversion gives (`yaml: line
/// 2: …` from the reader, `json: unsupported value: NaN` for a value JSON cannot hold,
/// `unsupported map key of type: …` for a key JSON cannot name), without the `error
/// converting YAML to JSON: ` its callers put before it.
pub(crate) fn to_json(body: &[u8]) -> Result<Value, String> {
    let text =
        std::str::from_utf8(body).map_err(|_| "yaml: invalid leading UTF-8 octet".to_string())?;
    let tree = Tree::parse(text, MAX_DEPTH)?;
    let Some(root) = tree.root else {
        return Ok(Value::Null);
    };
    let decoded = Decoder::new(&tree).decode(root)?;
    let mut unsupported = None;
    let json = to_jsonable(&decoded, &mut unsupported)?;
    match unsupported {
        Some(e) => Err(e),
        None => Ok(json),
    }
}

/// A value as go-yaml v2 decodes it into an `interface{}`.
#[derive(Debug, Clone, PartialEq)]
enum GoValue {
    Scalar(Scalar),
    Seq(Vec<GoValue>),
    /// `map[interface{}]interface{}`, in the order keys were first set.
    Map(Vec<(Scalar, GoValue)>),
}

impl GoValue {
    fn set(entries: &mut Vec<(Scalar, GoValue)>, key: Scalar, value: GoValue) {
        // NaN keys never equal one another, as in a Go map.
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => entries.push((key, value)),
        }
    }
}

/// go-yaml v2's decoding of a parsed document into `interface{}` values.
struct Decoder<'t> {
    tree: &'t Tree,
    /// Nodes decoded, and those of them decoded through an alias (the expansion limit).
    decoded: usize,
    aliased: usize,
    alias_depth: usize,
    /// Aliases being expanded (an anchor inside its own value).
    expanding: Vec<usize>,
    depth: usize,
}

/// Share of aliased nodes go-yaml v2 allows among those decoded, by how many were decoded.
fn allowed_alias_ratio(decoded: usize) -> f64 {
    const LOW: f64 = 400_000.0;
    const HIGH: f64 = 4_000_000.0;
    let d = decoded as f64;
    if d <= LOW {
        0.99
    } else if d >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((d - LOW) / (HIGH - LOW))
    }
}

fn want_map() -> String {
    "yaml: map merge requires map or sequence of maps as the value".to_string()
}

impl<'t> Decoder<'t> {
    fn new(tree: &'t Tree) -> Self {
        Decoder {
            tree,
            decoded: 0,
            aliased: 0,
            alias_depth: 0,
            expanding: Vec::new(),
            depth: 0,
        }
    }

    fn count(&mut self) -> Result<(), String> {
        self.decoded += 1;
        if self.alias_depth > 0 {
            self.aliased += 1;
        }
        let ratio = self.aliased as f64 / self.decoded as f64;
        if self.aliased > 100 && self.decoded > 1000 && ratio > allowed_alias_ratio(self.decoded) {
            return Err("yaml: document contains excessive aliasing".to_string());
        }
        if self.depth > MAX_DEPTH * 4 {
            return Err(format!("yaml: exceeded max depth of {}", MAX_DEPTH * 4));
        }
        Ok(())
    }

    fn decode(&mut self, id: usize) -> Result<GoValue, String> {
        self.count()?;
        self.depth += 1;
        let out = self.decode_node(id);
        self.depth -= 1;
        out
    }

    fn decode_node(&mut self, id: usize) -> Result<GoValue, String> {
        match self.tree.node(id) {
            Node::Scalar { text, hint } => Ok(GoValue::Scalar(
                resolve(text, hint.as_hint()).map_err(|e| format!("yaml: {e}"))?,
            )),
            Node::Seq(items) => items
                .iter()
                .map(|&item| self.decode(item))
                .collect::<Result<_, _>>()
                .map(GoValue::Seq),
            Node::Map(_) => {
                let mut entries = Vec::new();
                self.map_into(id, &mut entries)?;
                Ok(GoValue::Map(entries))
            }
            Node::Alias(target) => self.through_alias(*target, |d| d.decode(*target)),
        }
    }

    fn through_alias<T>(
        &mut self,
        target: usize,
        f: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<T, String> {
        if self.expanding.contains(&target) {
            return Err("yaml: anchor value contains itself".to_string());
        }
        self.expanding.push(target);
        self.alias_depth += 1;
        let out = f(self);
        self.alias_depth -= 1;
        self.expanding.retain(|&t| t != target);
        out
    }

    /// The entries of mapping `id` set in `entries`, merge keys first-come as go-yaml does.
    fn map_into(&mut self, id: usize, entries: &mut Vec<(Scalar, GoValue)>) -> Result<(), String> {
        let pairs = match self.tree.node(id) {
            Node::Map(pairs) => pairs,
            Node::Alias(target) => {
                let target = *target;
                return self.through_alias(target, |d| {
                    d.count()?;
                    d.map_into(target, entries)
                });
            }
            _ => return Err(want_map()),
        };
        for &(key, value) in pairs {
            if self.tree.is_merge_key(key) {
                self.merge(value, entries)?;
                continue;
            }
            let key = match self.decode(key)? {
                GoValue::Scalar(k) => k,
                complex => {
                    let shown = to_jsonable(&complex, &mut None).unwrap_or(Value::Null);
                    return Err(format!(
                        "yaml: invalid map key: {}",
                        go_sharp_format(&shown)
                    ));
                }
            };
            let value = self.decode(value)?;
            GoValue::set(entries, key, value);
        }
        Ok(())
    }

    /// A `<<` merge key's value: a mapping, an alias of one, or a sequence of those (earlier
    /// ones taking precedence).
    fn merge(&mut self, id: usize, entries: &mut Vec<(Scalar, GoValue)>) -> Result<(), String> {
        let is_map = |d: &Self, n: usize| match d.tree.node(n) {
            Node::Map(_) => true,
            Node::Alias(t) => matches!(d.tree.node(*t), Node::Map(_)),
            _ => false,
        };
        match self.tree.node(id) {
            Node::Map(_) | Node::Alias(_) if is_map(self, id) => self.map_into(id, entries),
            Node::Seq(items) => {
                for &item in items.iter().rev() {
                    if !is_map(self, item) {
                        return Err(want_map());
                    }
                    self.map_into(item, entries)?;
                }
                Ok(())
            }
            _ => Err(want_map()),
        }
    }
}

/// sigs.k8s.io/yaml's conversion of a decoded value to one JSON can hold: keys of other
/// types written as strings; a NaN or infinite number is noted in `unsupported` (JSON's
/// encoder refuses it after the conversion), and stands as null meanwhile.
fn to_jsonable(v: &GoValue, unsupported: &mut Option<String>) -> Result<Value, String> {
    Ok(match v {
        GoValue::Scalar(s) => scalar_json(s, unsupported),
        GoValue::Seq(items) => Value::Array(
            items
                .iter()
                .map(|item| to_jsonable(item, unsupported))
                .collect::<Result<_, _>>()?,
        ),
        GoValue::Map(entries) => {
            let mut map = Map::new();
            for (k, value) in entries {
                let value = to_jsonable(value, unsupported)?;
                map.insert(key_string(k, &value)?, value);
            }
            Value::Object(map)
        }
    })
}

fn scalar_json(s: &Scalar, unsupported: &mut Option<String>) -> Value {
    match s {
        Scalar::Null => Value::Null,
        Scalar::Bool(b) => Value::Bool(*b),
        Scalar::Int(i) => Value::from(*i),
        Scalar::Uint(u) => Value::from(*u),
        Scalar::Str(s) => Value::String(s.clone()),
        Scalar::Float(f) => float_json(*f).unwrap_or_else(|| {
            let shown = if f.is_nan() {
                "NaN"
            } else if *f > 0.0 {
                "+Inf"
            } else {
                "-Inf"
            };
            unsupported.get_or_insert_with(|| format!("json: unsupported value: {shown}"));
            Value::Null
        }),
    }
}

/// A finite float as it reads back from Go's JSON: integral values below 2^63 as integers
/// (Go writes them without a fraction), others as floats.
fn float_json(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if f.fract() == 0.0 && f.abs() < LIMIT {
        return Some(Value::from(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}

/// A map key as sigs.k8s.io/yaml writes it: strings as they are, integers in decimal,
/// floats as Go prints a float32, booleans as words; null and unsigned keys refused.
fn key_string(k: &Scalar, value: &Value) -> Result<String, String> {
    let refuse = |ty: &str, shown: String| {
        format!(
            "unsupported map key of type: {ty}, key: {shown}, value: {}",
            go_sharp_format(value)
        )
    };
    Ok(match k {
        Scalar::Str(s) => s.clone(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Float(f) if f.is_nan() => ".nan".to_string(),
        Scalar::Float(f) if f.is_infinite() => if *f > 0.0 { ".inf" } else { "-.inf" }.to_string(),
        Scalar::Float(f) => go_float32(*f),
        Scalar::Uint(u) => return Err(refuse("uint64", format!("{u:#x}"))),
        Scalar::Null => return Err(refuse("%!s(<nil>)", "<nil>".to_string())),
    })
}

/// A key hint of a parsed scalar, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum OwnedHint {
    /// See [`Hint::Plain`].
    Plain,
    /// See [`Hint::Quoted`].
    Quoted,
    /// See [`Hint::Core`].
    Core(String),
    /// See [`Hint::Other`].
    Other,
}

impl OwnedHint {
    fn as_hint(&self) -> Hint<'_> {
        match self {
            OwnedHint::Plain => Hint::Plain,
            OwnedHint::Quoted => Hint::Quoted,
            OwnedHint::Core(t) => Hint::Core(t),
            OwnedHint::Other => Hint::Other,
        }
    }
}
