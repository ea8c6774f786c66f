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

/// The strings of the array at a JSON pointer (other entries skipped), or none.
pub fn strings<'a>(obj: &'a Value, ptr: &str) -> Vec<&'a str> {
    obj.pointer(ptr)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// [`strings`], owned.
pub fn owned_strings(obj: &Value, ptr: &str) -> Vec<String> {
    strings(obj, ptr).into_iter().map(str::to_string).collect()
}
