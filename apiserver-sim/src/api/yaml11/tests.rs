use serde_json::json;

use super::resolve::{Hint, Scalar, resolve, resolve_plain};
use super::to_json;

fn yaml(text: &str) -> serde_json::Value {
    match to_json(text.as_bytes()) {
        Ok(v) => v,
        Err(e) => panic!("{text:?}: {e}"),
    }
}

fn yaml_err(text: &str) -> String {
    match to_json(text.as_bytes()) {
        Ok(v) => panic!("{text:?} read as {v}"),
        Err(e) => e,
    }
}

#[test]
fn yaml_1_1_booleans_and_nulls_when_plain() {
    for t in [
        "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
    ] {
        assert_eq!(resolve_plain(t), Scalar::Bool(true), "{t}");
    }
    for t in [
        "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False", "FALSE",
    ] {
        assert_eq!(resolve_plain(t), Scalar::Bool(false), "{t}");
    }
    for t in ["", "~", "null", "Null", "NULL"] {
        assert_eq!(resolve_plain(t), Scalar::Null, "{t}");
    }
    // Other spellings are strings.
    for t in ["yES", "oN", "nil", "None", "tRUE", "o", "t", "f"] {
        assert_eq!(resolve_plain(t), Scalar::Str(t.to_string()), "{t}");
    }
}

#[test]
fn numbers_in_go_syntax() {
    let int = |t: &str| resolve_plain(t);
    assert_eq!(int("42"), Scalar::Int(42));
    assert_eq!(int("+42"), Scalar::Int(42));
    assert_eq!(int("-42"), Scalar::Int(-42));
    assert_eq!(int("1_000"), Scalar::Int(1000));
    assert_eq!(int("0x1F"), Scalar::Int(31));
    assert_eq!(int("-0x10"), Scalar::Int(-16));
    assert_eq!(int("0o17"), Scalar::Int(15));
    assert_eq!(int("0777"), Scalar::Int(511));
    assert_eq!(int("0b101"), Scalar::Int(5));
    assert_eq!(int("-0b101"), Scalar::Int(-5));
    // go-yaml v2 parses a 0b prefix's digits with a sign of their own.
    assert_eq!(int("0b-11"), Scalar::Int(-3));
    assert_eq!(int("18446744073709551615"), Scalar::Uint(u64::MAX));
    // Not octal, but a float by go-yaml's pattern.
    assert_eq!(int("09"), Scalar::Float(9.0));
    assert_eq!(int("1e3"), Scalar::Float(1000.0));
    assert_eq!(int("1."), Scalar::Float(1.0));
    assert_eq!(int("-.5"), Scalar::Float(-0.5));
    assert_eq!(int(".5"), Scalar::Float(0.5));
    assert_eq!(int("1_0.5"), Scalar::Float(10.5));
    assert!(matches!(int(".nan"), Scalar::Float(f) if f.is_nan()));
    assert_eq!(int("-.inf"), Scalar::Float(f64::NEG_INFINITY));
    // Overflowing floats, sexagesimals, hex floats, versions and dates stay strings.
    for t in [
        "1e400",
        "1:20",
        "0x1p3",
        "1.2.3",
        "2024-01-02",
        "+",
        "0x",
        ".",
        "._5",
        "12abc",
    ] {
        assert_eq!(int(t), Scalar::Str(t.to_string()), "{t}");
    }
}

#[test]
fn quoted_and_tagged_scalars() {
    assert_eq!(resolve("y", Hint::Quoted), Ok(Scalar::Str("y".into())));
    assert_eq!(
        resolve("12", Hint::Core("str")),
        Ok(Scalar::Str("12".into()))
    );
    assert_eq!(resolve("12", Hint::Core("int")), Ok(Scalar::Int(12)));
    assert_eq!(resolve("12", Hint::Core("float")), Ok(Scalar::Float(12.0)));
    assert_eq!(resolve("yes", Hint::Core("bool")), Ok(Scalar::Bool(true)));
    assert_eq!(
        resolve("aGk=", Hint::Core("binary")),
        Ok(Scalar::Str("hi".into()))
    );
    assert_eq!(
        resolve("abc", Hint::Core("int")),
        Err("cannot decode !!str `abc` as a !!int".to_string())
    );
    assert_eq!(resolve("yes", Hint::Other), Ok(Scalar::Str("yes".into())));
}

#[test]
fn documents_as_upstream_converts_them() {
    let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n  q: 'y'\n  d: \"on\"\n  m: 010\n  n: x\n";
    assert_eq!(
        yaml(doc),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": true},
               "data": {"k": "v", "q": "y", "d": "on", "m": 8, "false": "x"}})
    );
    // Block scalars are strings; a timestamp into an interface{} stays its text.
    assert_eq!(
        yaml("a: |\n  yes\nb: >-\n  no\nc: 2024-01-02\nd: !!timestamp 2024-01-02\n"),
        json!({"a": "yes\n", "b": "no", "c": "2024-01-02", "d": "2024-01-02"})
    );
    // Integral floats read back from Go's JSON as integers.
    assert_eq!(yaml("[1.0, 1.5, 1e3]"), json!([1, 1.5, 1000]));
    // The first document only; an empty one is null.
    assert_eq!(yaml("a: 1\n---\nb: 2\n"), json!({"a": 1}));
    assert_eq!(yaml(""), serde_json::Value::Null);
    // Later duplicate keys win.
    assert_eq!(yaml("a: 1\na: 2\n"), json!({"a": 2}));
}

#[test]
fn keys_written_as_strings() {
    assert_eq!(
        yaml("yes: a\n1: b\n1.5: c\n0.1: d\n.inf: e\n1e10: f\n"),
        json!({"true": "a", "1": "b", "1.5": "c", "0.1": "d", ".inf": "e", "1e+10": "f"})
    );
    assert!(yaml_err("~: a\n").starts_with("unsupported map key of type: %!s(<nil>), key: <nil>"));
    assert_eq!(
        yaml_err("18446744073709551615: a\n"),
        "unsupported map key of type: uint64, key: 0xffffffffffffffff, value: \"a\""
    );
    assert!(yaml_err("? [a]\n: b\n").starts_with("yaml: invalid map key: "));
}

#[test]
fn anchors_aliases_and_merge_keys() {
    let doc = "base: &b {x: 1, w: 2}\nother: &o {w: 3, z: 4}\nm:\n  <<: *b\n  x: 9\nl:\n  <<: [*b, *o]\ns: *b\n";
    assert_eq!(
        yaml(doc),
        json!({"base": {"x": 1, "w": 2}, "other": {"w": 3, "z": 4},
               "m": {"x": 9, "w": 2}, "l": {"x": 1, "w": 2, "z": 4}, "s": {"x": 1, "w": 2}})
    );
    assert_eq!(
        yaml_err("a: &a 1\nb:\n  <<: *a\n"),
        "yaml: map merge requires map or sequence of maps as the value"
    );
    // A quoted "<<" is an ordinary key.
    assert_eq!(yaml("'<<': 1\n"), json!({"<<": 1}));
}

#[test]
fn billion_laughs_refused() {
    let mut doc = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let p = i - 1;
        doc.push_str(&format!(
            "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    assert_eq!(yaml_err(&doc), "yaml: document contains excessive aliasing");
}

#[test]
fn values_json_cannot_hold_and_bad_input() {
    assert_eq!(yaml_err("a: .nan\n"), "json: unsupported value: NaN");
    assert_eq!(yaml_err("a: [-.inf]\n"), "json: unsupported value: -Inf");
    assert!(yaml_err("a: [1, 2\n").starts_with("yaml: line "));
    assert_eq!(
        yaml_err("a: [1, *nope]\n"),
        "yaml: unknown anchor 'nope' referenced"
    );
    // Only the first document is read: what follows it may be anything.
    assert_eq!(yaml("a: 1\n---\nb: [\n"), json!({"a": 1}));
    assert_eq!(
        to_json(b"a: \xff\n").err().as_deref(),
        Some("yaml: invalid leading UTF-8 octet")
    );
    let deep = "[".repeat(200);
    assert!(yaml_err(&deep).starts_with("yaml: "));
    assert_eq!(
        yaml_err("a: !!int abc\n"),
        "yaml: cannot decode !!str `abc` as a !!int"
    );
}
