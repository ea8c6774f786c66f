//! Items of a JSON list as upstream writes them for built-in kinds: without `apiVersion` and
//! `kind` (the list names them once; each item is the Go struct with an empty type meta, which
//! its encoder leaves out). The objects' cached JSON is copied member by member, leaving those
//! two out, without decoding it.

use bytes::{BufMut, BytesMut};

/// Appends `doc` (one JSON object) to `out` without its top-level `apiVersion` and `kind`
/// members. A document this reader does not follow is appended unchanged.
pub fn append_without_type_meta(doc: &[u8], out: &mut BytesMut) {
    let start = out.len();
    if copy_members(doc, out).is_none() {
        out.truncate(start);
        out.extend_from_slice(doc);
    }
}

fn copy_members(doc: &[u8], out: &mut BytesMut) -> Option<()> {
    let mut at = skip_space(doc, 0);
    if doc.get(at) != Some(&b'{') {
        return None;
    }
    out.put_u8(b'{');
    at = skip_space(doc, at + 1);
    let mut first = true;
    if doc.get(at) == Some(&b'}') {
        out.put_u8(b'}');
        return Some(());
    }
    loop {
        let key_start = at;
        let key_end = skip_string(doc, at)?;
        let key = &doc[key_start..key_end];
        at = skip_space(doc, key_end);
        if doc.get(at) != Some(&b':') {
            return None;
        }
        let value_end = skip_value(doc, skip_space(doc, at + 1))?;
        if key != b"\"apiVersion\"" && key != b"\"kind\"" {
            if !first {
                out.put_u8(b',');
            }
            out.extend_from_slice(&doc[key_start..value_end]);
            first = false;
        }
        at = skip_space(doc, value_end);
        match doc.get(at)? {
            b',' => at = skip_space(doc, at + 1),
            b'}' => {
                out.put_u8(b'}');
                return Some(());
            }
            _ => return None,
        }
    }
}

fn skip_space(doc: &[u8], mut at: usize) -> usize {
    while matches!(doc.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// The end (exclusive) of the string starting at `at`.
fn skip_string(doc: &[u8], at: usize) -> Option<usize> {
    if doc.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    loop {
        match doc.get(i)? {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// The end (exclusive) of the value starting at `at`.
fn skip_value(doc: &[u8], at: usize) -> Option<usize> {
    match doc.get(at)? {
        b'"' => skip_string(doc, at),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = at;
            loop {
                match doc.get(i)? {
                    b'"' => {
                        i = skip_string(doc, i)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
        }
        _ => {
            let mut i = at;
            while doc
                .get(i)
                .is_some_and(|c| !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            {
                i += 1;
            }
            (i > at).then_some(i)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::append_without_type_meta;
    use bytes::BytesMut;
    use serde_json::{Value, json};

    fn strip(doc: &str) -> String {
        let mut out = BytesMut::new();
        append_without_type_meta(doc.as_bytes(), &mut out);
        String::from_utf8(out.to_vec()).unwrap_or_default()
    }

    #[test]
    fn leaves_out_the_top_level_type_meta_only() {
        let obj = json!({
            "action": "x", "apiVersion": "v1", "data": {"kind": "in data", "s": "a\"}{,"},
            "involvedObject": {"apiVersion": "apps/v1", "kind": "Deployment"},
            "kind": "Event", "metadata": {"name": "e"}, "n": [1, {"kind": 2}], "t": true,
        });
        let out: Value = serde_json::from_str(&strip(&obj.to_string())).unwrap_or_default();
        let mut want = obj.clone();
        if let Some(m) = want.as_object_mut() {
            m.remove("apiVersion");
            m.remove("kind");
        }
        assert_eq!(out, want);
        assert_eq!(strip(r#"{"apiVersion":"v1","kind":"X"}"#), "{}");
        assert_eq!(strip("{}"), "{}");
        assert_eq!(strip(r#" { "kind" : "X" , "a" : 1 } "#), r#"{"a" : 1}"#);
    }

    #[test]
    fn copies_what_it_does_not_follow_unchanged() {
        for doc in ["[1]", r#"{"a":"#, r#"{"a" 1}"#, ""] {
            assert_eq!(strip(doc), doc);
        }
    }
}
