//! What a YAML scalar is, as go-yaml v2 (the reader behind kube-apiserver's YAML bodies)
//! resolves it: YAML 1.1's booleans (`y`, `yes`, `on`, `n`, `no`, `off`, …), nulls (`~`,
//! `null`, the empty scalar), integers in Go's bases (`0x1F`, `0o17`, `017`, `0b101`, with
//! `_` separators), floats (`1e3`, `.5`, `.inf`, `.nan`), and strings for everything else.
//! Only plain scalars (and explicitly tagged ones) are resolved; quoted ones are strings.

/// A resolved scalar, with the Go type go-yaml v2 decodes it into.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    /// `nil`.
    Null,
    /// `bool`.
    Bool(bool),
    /// `int` (64 bits).
    Int(i64),
    /// `uint64`: an integer above the `int` range.
    Uint(u64),
    /// `float64` (possibly infinite or NaN).
    Float(f64),
    /// `string`.
    Str(String),
}

/// How a scalar was written: its style and tag, as far as resolution cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hint<'a> {
    /// A plain scalar without a tag: resolved by its text.
    Plain,
    /// A quoted or block scalar without a tag, or one with the non-specific tag `!`: a string.
    Quoted,
    /// A scalar with the YAML core schema tag `!!<suffix>`.
    Core(&'a str),
    /// Any other tag: the text, as a string.
    Other,
}

/// Why a scalar could not be read with its tag (go-yaml v2's words, without `yaml: `).
pub(crate) type ResolveError = String;

/// Resolves `text`, written as `hint` says.
pub(crate) fn resolve(text: &str, hint: Hint<'_>) -> Result<Scalar, ResolveError> {
    let tag = match hint {
        Hint::Plain => return Ok(resolve_plain(text)),
        Hint::Quoted | Hint::Other => return Ok(Scalar::Str(text.to_string())),
        Hint::Core(tag) => tag,
    };
    match tag {
        "str" => Ok(Scalar::Str(text.to_string())),
        "binary" => base64_text(text),
        // A timestamp decoded into an interface{} stays its text in go-yaml v2.
        "timestamp" => Ok(Scalar::Str(text.to_string())),
        "bool" | "int" | "float" | "null" => {
            let found = resolve_plain(text);
            match (tag, &found) {
                ("bool", Scalar::Bool(_))
                | ("int", Scalar::Int(_) | Scalar::Uint(_))
                | ("float", Scalar::Float(_))
                | ("null", Scalar::Null) => Ok(found),
                ("float", Scalar::Int(i)) => Ok(Scalar::Float(*i as f64)),
                _ => Err(format!(
                    "cannot decode !!{} `{text}` as a !!{tag}",
                    tag_of(&found)
                )),
            }
        }
        // Tags resolution does not know are kept as they are, with the text.
        _ => Ok(Scalar::Str(text.to_string())),
    }
}

fn tag_of(s: &Scalar) -> &'static str {
    match s {
        Scalar::Null => "null",
        Scalar::Bool(_) => "bool",
        Scalar::Int(_) | Scalar::Uint(_) => "int",
        Scalar::Float(_) => "float",
        Scalar::Str(_) => "str",
    }
}

fn base64_text(text: &str) -> Result<Scalar, ResolveError> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .map(|bytes| Scalar::Str(String::from_utf8_lossy(&bytes).into_owned()))
        .map_err(|_| "!!binary value contains invalid base64 data".to_string())
}

/// The values go-yaml v2 finds by exact text.
fn by_text(text: &str) -> Option<Scalar> {
    Some(match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Scalar::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Scalar::Bool(false)
        }
        "" | "~" | "null" | "Null" | "NULL" => Scalar::Null,
        ".nan" | ".NaN" | ".NAN" => Scalar::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Scalar::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Scalar::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// A plain scalar: looked up by its text, then by its first character tried as a number.
pub(crate) fn resolve_plain(text: &str) -> Scalar {
    if let Some(found) = by_text(text) {
        return found;
    }
    let number = match text.as_bytes().first() {
        Some(b'.') => go_float(text),
        Some(b'+' | b'-' | b'0'..=b'9') => number(text),
        _ => None,
    };
    number.unwrap_or_else(|| Scalar::Str(text.to_string()))
}

/// A scalar starting with a sign or a digit: an integer in Go's syntax (underscores
/// dropped), else a YAML-style float, else a `0b` binary integer whose digits may carry a
/// sign of their own (as go-yaml v2 parses them).
fn number(text: &str) -> Option<Scalar> {
    let plain: String = text.chars().filter(|&c| c != '_').collect();
    if let Some(i) = go_parse_int(&plain) {
        return Some(Scalar::Int(i));
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Some(Scalar::Uint(u));
    }
    if yaml_style_float(&plain)
        && let Some(f) = go_float(&plain)
    {
        return Some(f);
    }
    if let Some(digits) = plain.strip_prefix("0b") {
        if let Ok(i) = i64::from_str_radix(digits, 2) {
            return Some(Scalar::Int(i));
        }
        return u64::from_str_radix(digits, 2).ok().map(Scalar::Uint);
    }
    if let Some(digits) = plain.strip_prefix("-0b") {
        // Rust's radix parser, like Go's, refuses a second sign after this one.
        if digits.starts_with(['+', '-']) {
            return None;
        }
        return i64::from_str_radix(&format!("-{digits}"), 2)
            .ok()
            .map(Scalar::Int);
    }
    None
}

/// Splits Go's base prefix (`0x`, `0o`, `0b`, or a leading `0` for octal) off unsigned digits.
fn base_of(digits: &str) -> (u32, &str) {
    let lower =
        |p: &str| digits.len() > 2 && digits.as_bytes()[..2].eq_ignore_ascii_case(p.as_bytes());
    if lower("0x") {
        (16, &digits[2..])
    } else if lower("0o") {
        (8, &digits[2..])
    } else if lower("0b") {
        (2, &digits[2..])
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`: no sign, a base prefix, digits of that base only.
fn go_parse_uint(s: &str) -> Option<u64> {
    let (radix, digits) = base_of(s);
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Go's `strconv.ParseInt(s, 0, 64)`: an optional sign, then as [`go_parse_uint`], within
/// the 64-bit range.
fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(rest)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// go-yaml's pattern of floats: `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`.
fn yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal text: a finite value, or nothing (syntax
/// errors and overflow alike).
fn go_float(s: &str) -> Option<Scalar> {
    // Rust accepts what Go's decimal syntax accepts, and more words ("inf", "nan"): those
    // are Go's too, but never reach here (they start with a letter, or are found by text).
    if !s
        .bytes()
        .all(|c| c.is_ascii_digit() || b".eE+-".contains(&c))
    {
        return None;
    }
    let f: f64 = s.parse().ok()?;
    f.is_finite().then_some(Scalar::Float(f))
}
