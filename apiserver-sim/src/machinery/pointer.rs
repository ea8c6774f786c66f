//! Values read from objects held as JSON by JSON pointer, with the zero value when absent.

use serde_json::Value;

/// The string at a JSON pointer, or "".
pub fn text<'a>(obj: &'a Value, ptr: &str) -> &'a str {
    obj.pointer(ptr).and_then(Value::as_str).unwrap_or("")
}

/// The integer at a JSON pointer, or 0.
pub fn int(obj: &Value, ptr: &str) -> i64 {
    obj.pointer(ptr).and_then(Value::as_i64).unwrap_or(0)
}
