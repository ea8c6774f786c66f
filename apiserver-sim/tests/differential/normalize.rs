//! Normalization: what must differ between two servers (and two runs) is replaced by a
//! placeholder, nothing else: uids, timestamps and ages, resourceVersion values and continue
//! tokens, the run's random suffix, generated names, and loopback ports; and the order of
//! managedFields entries, which follows their times.

use serde_json::Value;

fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && s.ends_with('Z')
        && b[..4].iter().all(u8::is_ascii_digit)
}

/// An age as printed in tables (`5s`, `3m2s`, `2d`).
fn is_age(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_digit() || "smhdy".contains(c))
        && s.chars().next().is_some_and(|c| c.is_ascii_digit())
        && !s.chars().last().is_some_and(|c| c.is_ascii_digit())
}

/// Replaces the port after every loopback host with `PORT`.
fn ports(s: &str) -> String {
    ports_after(&ports_after(s, "127.0.0.1:"), "localhost:")
}

fn ports_after(s: &str, host: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(host) {
        let (head, tail) = rest.split_at(i + host.len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("PORT");
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// Replaces the digits after each `marker` with `<n>`.
fn digits_after(s: &str, marker: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find(marker) {
        let (head, tail) = rest.split_at(i + marker.len());
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits > 0 {
            out.push_str("<n>");
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

/// Generated names: `<prefix>gen-` followed by 5 random characters.
fn generated(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("gen-") {
        let (head, tail) = rest.split_at(i + 4);
        out.push_str(head);
        let n = tail.chars().take_while(char::is_ascii_alphanumeric).count();
        if n == 5 {
            out.push_str("XXXXX");
            rest = &tail[5..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// A string with the run suffix, ports, generated names and resource versions in messages
/// replaced.
pub fn text(s: &str, run: &str) -> String {
    let s = s.replace(run, "RUN");
    let s = ports(&s);
    let s = generated(&s);
    let s = digits_after(&s, "too old resource version: ");
    let s = digits_after(&s, "resource version: <n> (");
    let s = digits_after(&s, "does not match the ResourceVersion in record (");
    uuids(&s)
}

/// Replaces every UUID inside a text with `<uid>`.
fn uuids(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s.is_char_boundary(i)
            && s.len() - i >= 36
            && s.is_char_boundary(i + 36)
            && is_uuid(&s[i..i + 36])
        {
            out.push_str("<uid>");
            i += 36;
        } else if let Some(c) = s[i..].chars().next() {
            out.push(c);
            i += c.len_utf8();
        } else {
            break;
        }
    }
    out
}

/// Normalizes a JSON value in place (`key` is the field holding it).
pub fn value(v: &mut Value, key: &str, run: &str, in_table: bool) {
    match v {
        Value::String(s) => {
            if is_uuid(s) {
                *s = "<uid>".into();
            } else if is_timestamp(s) {
                *s = "<time>".into();
            } else if matches!(key, "resourceVersion" | "continue") && !s.is_empty() {
                *s = format!("<{key}>");
            } else if in_table && is_age(s) {
                *s = "<age>".into();
            } else {
                *s = text(s, run);
            }
        }
        Value::Array(items) => {
            for item in items.iter_mut() {
                value(item, key, run, in_table);
            }
            sort_managed_fields(items);
        }
        Value::Object(map) => {
            let table = in_table || map.get("kind").and_then(Value::as_str) == Some("Table");
            let keys: Vec<String> = map.keys().cloned().collect();
            for k in keys {
                let new_key = text(&k, run);
                if let Some(mut child) = map.remove(&k) {
                    value(&mut child, &k, run, table);
                    map.insert(new_key, child);
                }
            }
        }
        _ => {}
    }
}

/// managedFields entries are ordered by operation, then by the second of their time, then by
/// manager: with the times replaced, entries written in different seconds on one server and in
/// the same second on the other would differ in order only. So a list of them is put in the
/// order of operation, manager, subresource and apiVersion.
fn sort_managed_fields(items: &mut [Value]) {
    let is_entry = |item: &Value| item.get("manager").is_some() && item.get("fieldsType").is_some();
    if items.is_empty() || !items.iter().all(is_entry) {
        return;
    }
    let field = |item: &Value, name: &str| {
        item.get(name)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    items.sort_by_key(|item| {
        ["operation", "manager", "subresource", "apiVersion"].map(|name| field(item, name))
    });
}

/// Puts every list of managedFields entries inside `v` in order (for fixtures recorded before
/// the order was normalized).
pub fn order_managed_fields(v: &mut Value) {
    match v {
        Value::Array(items) => {
            items.iter_mut().for_each(order_managed_fields);
            sort_managed_fields(items);
        }
        Value::Object(map) => map.values_mut().for_each(order_managed_fields),
        _ => {}
    }
}

/// A normalized copy.
pub fn normalized(v: &Value, run: &str) -> Value {
    let mut v = v.clone();
    value(&mut v, "", run, false);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn managed_fields_entries_are_ordered_without_their_times() {
        let entry = |manager: &str, operation: &str, time: &str| {
            json!({"manager": manager, "operation": operation, "apiVersion": "v1",
                "fieldsType": "FieldsV1", "fieldsV1": {}, "time": time})
        };
        let written = json!({"managedFields": [
            entry("bob", "Apply", "2026-11-28T03:14:46Z"),
            entry("ctl", "Update", "2026-11-28T03:14:45Z"),
            entry("alice", "Apply", "2026-11-28T03:14:47Z"),
        ]});
        let expected = json!({"managedFields": [
            entry("alice", "Apply", "<time>"),
            entry("bob", "Apply", "<time>"),
            entry("ctl", "Update", "<time>"),
        ]});
        assert_eq!(normalized(&written, "q7x2k"), expected);
        let mut recorded = json!({"managedFields": [
            entry("bob", "Apply", "<time>"),
            entry("alice", "Apply", "<time>"),
            entry("ctl", "Update", "<time>"),
        ]});
        order_managed_fields(&mut recorded);
        assert_eq!(recorded, expected);
        // Other lists keep their order.
        assert_eq!(normalized(&json!(["b", "a"]), "q7x2k"), json!(["b", "a"]));
    }

    #[test]
    fn placeholders_replace_only_what_must_differ() {
        let v = json!({"metadata": {"uid": "0b5e7e43-1b2c-4f7a-9d3e-0123456789ab",
            "creationTimestamp": "2026-11-28T03:14:47Z", "resourceVersion": "42",
            "name": "cm-gen-ab12c", "namespace": "crud-q7x2k"},
            "message": "Post \"https://127.0.0.1:40511/v\": too old resource version: 3 (99)"});
        assert_eq!(
            normalized(&v, "q7x2k"),
            json!({"metadata": {"uid": "<uid>", "creationTimestamp": "<time>",
                "resourceVersion": "<resourceVersion>", "name": "cm-gen-XXXXX",
                "namespace": "crud-RUN"},
                "message": "Post \"https://127.0.0.1:PORT/v\": too old resource version: <n> (<n>)"})
        );
    }
}
