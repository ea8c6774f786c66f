//! Decoded JSON values as Go prints them: `%v` and `%#v` of what `encoding/json` decodes
//! into an `interface{}`, and `%T` of it (the real server's messages quote values so).

use serde_json::Value;

/// A value as Go's `fmt` prints a decoded JSON value with `%v`: maps with sorted keys as
/// `map[k:v]`, lists as `[a b]`, strings bare, `<nil>` for null, numbers as float64 prints.
pub fn go_format(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), go_float),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_format).collect();
            format!("[{}]", inner.join(" "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", go_format(&m[k])))
                .collect();
            format!("map[{}]", inner.join(" "))
        }
    }
}

/// A value as Go's `fmt` prints a decoded JSON value with `%#v`: Go syntax, with strings
/// quoted, `interface {}(nil)` for null, `[]interface {}{…}` and `map[string]interface
/// {}{…}` (sorted keys) for lists and maps.
pub fn go_sharp_format(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".to_string(),
        Value::Bool(_) | Value::Number(_) => go_format(v),
        Value::String(s) => go_quote(s),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(go_sharp_format).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let inner: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", go_quote(k), go_sharp_format(&m[k])))
                .collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// A string as Go's `strconv.Quote` writes it (the common escapes; other control
/// characters as `\x..`).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A float64 as Go's `%v` prints it: the shortest digits, in exponent form from 1e+06 up
/// and below 1e-04.
pub fn go_float(f: f64) -> String {
    g_shortest(format!("{f:e}"), || f.to_string(), f == 0.0)
}

/// A float64 as Go's `strconv.FormatFloat(f, 'g', -1, 32)` writes it: as [`go_float`],
/// with the shortest digits that read back as the same float32.
pub fn go_float32(f: f64) -> String {
    // Narrowing to the nearest float32 is what Go's 32-bit formatting does first.
    let narrow = f as f32;
    g_shortest(format!("{narrow:e}"), || narrow.to_string(), narrow == 0.0)
}

/// Go's `%g` with the shortest digits, from Rust's shortest exponent form (`sci`) and
/// plain form (`plain`).
fn g_shortest(sci: String, plain: impl FnOnce() -> String, zero: bool) -> String {
    if zero {
        return "0".to_string();
    }
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return plain();
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.abs())
}

/// The Go type `encoding/json` decodes a value into, as `%T` prints it.
pub fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prints_as_go_prints() {
        let v = json!({"b": [true, null, 1000000, 0.5, 123456, 0.0001, 0.00001], "a": "x"});
        assert_eq!(
            go_format(&v),
            "map[a:x b:[true <nil> 1e+06 0.5 123456 0.0001 1e-05]]"
        );
        assert_eq!(go_format(&json!(-2500000.5)), "-2.5000005e+06");
        assert_eq!(go_type(&json!("two")), "string");
        assert_eq!(go_type(&json!({})), "map[string]interface {}");
    }

    #[test]
    fn prints_go_syntax() {
        let v = json!({"b": [true, null, 1.5], "a": "x\"y"});
        assert_eq!(
            go_sharp_format(&v),
            r#"map[string]interface {}{"a":"x\"y", "b":[]interface {}{true, interface {}(nil), 1.5}}"#
        );
        assert_eq!(go_sharp_format(&json!(3.0)), "3");
    }

    #[test]
    fn float32_keys_as_go_writes_them() {
        assert_eq!(go_float32(1.5), "1.5");
        assert_eq!(go_float32(0.1), "0.1");
        assert_eq!(go_float32(1.234_567_891_234), "1.2345679");
        assert_eq!(go_float32(1e10), "1e+10");
        assert_eq!(go_float32(123456.0), "123456");
    }
}
