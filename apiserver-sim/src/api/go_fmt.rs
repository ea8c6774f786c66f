//! Decoded JSON values as Go prints them: `%v` of what `encoding/json` decodes into an
//! `interface{}`, and `%T` of it (the real server's messages quote values so).

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

/// A float64 as Go's `%v` prints it: the shortest digits, in exponent form from 1e+06 up
/// and below 1e-04.
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".to_string();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if (-4..6).contains(&exp) {
        return f.to_string();
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
}
