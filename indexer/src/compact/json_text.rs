//! Small scans over JSON text that serde_json has already validated: whitespace, the end of a
//! string, the end of any value, a key's text. Used to find the `metadata` member of an object
//! without parsing the rest, and to cut a member out of it.

use std::borrow::Cow;
use std::ops::Range;

use serde::de::IgnoredAny;

/// The first index at or after `at` that is not JSON whitespace.
pub(crate) fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
    {
        at += 1;
    }
    at
}

/// The last index at or before `at` (exclusive end) after skipping whitespace backwards: the
/// index just past the previous non-whitespace byte.
pub(crate) fn skip_whitespace_back(bytes: &[u8], mut end: usize) -> usize {
    while end > 0
        && bytes
            .get(end - 1)
            .is_some_and(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
    {
        end -= 1;
    }
    end
}

/// The index just past the string that opens at `at` (a `"`), or `None` if none does.
pub(crate) fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut i = at + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// The index just past the JSON value that starts at `at`.
pub(crate) fn value_end(text: &str, at: usize) -> Result<usize, serde_json::Error> {
    let rest = text.get(at..).unwrap_or_default();
    let mut values = serde_json::Deserializer::from_str(rest).into_iter::<IgnoredAny>();
    match values.next() {
        Some(Ok(_)) => Ok(at + values.byte_offset()),
        Some(Err(e)) => Err(e),
        None => Err(serde::de::Error::custom("a value was expected")),
    }
}

/// The text of a JSON string token (quotes included), unescaped only when it has escapes.
pub(crate) fn key_text(token: &str) -> Result<Cow<'_, str>, serde_json::Error> {
    match token.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        Some(plain) if !plain.contains('\\') => Ok(Cow::Borrowed(plain)),
        _ => serde_json::from_str::<String>(token).map(Cow::Owned),
    }
}

/// The range to cut from `text` to remove the object member at `start..end` (from its key's
/// opening quote to the end of its value) with one comma beside it, so that the rest stays valid
/// JSON. `None` when the span is not a member of an object.
pub(crate) fn member_cut(text: &str, start: usize, end: usize) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    if start >= end || end > text.len() || string_end(bytes, start).is_none_or(|k| k > end) {
        return None;
    }
    let before = skip_whitespace_back(bytes, start);
    let after = skip_whitespace(bytes, end);
    let cut = match (before.checked_sub(1).map(|i| bytes[i]), bytes.get(after)) {
        // Not the last member: the comma after it goes too.
        (Some(b'{' | b','), Some(b',')) => start..skip_whitespace(bytes, after + 1),
        // The last of several members: the comma before it goes.
        (Some(b','), Some(b'}')) => before - 1..end,
        // The only member.
        (Some(b'{'), Some(b'}')) => start..end,
        _ => return None,
    };
    (text.is_char_boundary(cut.start) && text.is_char_boundary(cut.end)).then_some(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, member: &str) -> Option<String> {
        let start = text.find(member)?;
        let mut out = text.to_owned();
        out.replace_range(member_cut(text, start, start + member.len())?, "");
        Some(out)
    }

    #[test]
    fn cuts_a_member_and_one_comma_wherever_it_stands() {
        let m = r#""m":[1]"#;
        assert_eq!(cut(r#"{"m":[1],"a":1}"#, m).unwrap(), r#"{"a":1}"#);
        assert_eq!(cut(r#"{"a":1,"m":[1]}"#, m).unwrap(), r#"{"a":1}"#);
        assert_eq!(
            cut(r#"{"a":1, "m":[1] ,"b":2}"#, m).unwrap(),
            r#"{"a":1, "b":2}"#
        );
        assert_eq!(cut(r#"{ "m":[1] }"#, m).unwrap(), r#"{  }"#);
        assert_eq!(cut(r#"["m":[1]]"#, m), None);
        assert_eq!(member_cut("{}", 1, 1), None);
    }

    #[test]
    fn finds_the_ends_of_strings_and_values() {
        let text = r#"{"a\"b":[1,{"c":"}"}], "d":true}"#;
        let bytes = text.as_bytes();
        assert_eq!(string_end(bytes, 1), Some(7));
        assert_eq!(&text[8..value_end(text, 8).unwrap()], r#"[1,{"c":"}"}]"#);
        assert_eq!(string_end(bytes, 0), None);
        assert_eq!(skip_whitespace(bytes, 22), 23);
        assert_eq!(skip_whitespace_back(b"a  ", 3), 1);
    }

    #[test]
    fn unescapes_keys_only_when_needed() {
        assert!(matches!(key_text(r#""name""#), Ok(Cow::Borrowed("name"))));
        assert_eq!(key_text(r#""n\u0061me""#).unwrap(), "name");
        assert!(key_text(r#""bad\"#).is_err());
    }
}
