//! JSON syntax errors worded as Go's `encoding/json` words them (`unexpected end of JSON
//! input`, `invalid character 'x' looking for beginning of value`, …): the real server decodes
//! request bodies, patches and continue tokens with it and puts its message in the answer.
//!
//! [`syntax_error`] walks the document as Go's scanner does and reports the first byte the
//! scanner would refuse, with the scanner's own phrase for the state it was in.

/// Go's message for the first syntax error in `doc`, or `None` when Go's scanner accepts it.
pub fn syntax_error(doc: &[u8]) -> Option<String> {
    let mut s = Scanner { doc, at: 0 };
    let outcome = s.value().and_then(|()| {
        s.skip_space();
        match s.peek() {
            None => Ok(()),
            Some(c) => Err(Refusal::Char(c, "after top-level value")),
        }
    });
    match outcome {
        Ok(()) => None,
        Err(Refusal::End) => Some("unexpected end of JSON input".to_string()),
        Err(Refusal::Char(c, context)) => {
            Some(format!("invalid character {} {context}", quote_char(c)))
        }
    }
}

/// A JSON decoding failure as Go words it: the scanner's syntax error when there is one,
/// otherwise the given fallback (a type error found after the syntax passed).
pub fn decode_error(doc: &[u8], fallback: impl std::fmt::Display) -> String {
    syntax_error(doc).unwrap_or_else(|| fallback.to_string())
}

enum Refusal {
    /// The input ended inside a value.
    End,
    /// A byte the scanner refuses, and the phrase naming where.
    Char(u8, &'static str),
}

struct Scanner<'a> {
    doc: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.doc.get(self.at).copied()
    }

    fn next(&mut self) -> Result<u8, Refusal> {
        let c = self.peek().ok_or(Refusal::End)?;
        self.at += 1;
        Ok(c)
    }

    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn value(&mut self) -> Result<(), Refusal> {
        self.skip_space();
        match self.next()? {
            b'{' => self.object(),
            b'[' => self.array(),
            b'"' => self.string(),
            b'-' => match self.next()? {
                c @ b'0'..=b'9' => self.number(c),
                c => Err(Refusal::Char(c, "in numeric literal")),
            },
            c @ b'0'..=b'9' => self.number(c),
            b't' => self.literal(b"rue", "true"),
            b'f' => self.literal(b"alse", "false"),
            b'n' => self.literal(b"ull", "null"),
            c => Err(Refusal::Char(c, "looking for beginning of value")),
        }
    }

    fn object(&mut self) -> Result<(), Refusal> {
        self.skip_space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.skip_space();
            match self.next()? {
                b'"' => self.string()?,
                c => {
                    return Err(Refusal::Char(
                        c,
                        "looking for beginning of object key string",
                    ));
                }
            }
            self.skip_space();
            match self.next()? {
                b':' => {}
                c => return Err(Refusal::Char(c, "after object key")),
            }
            self.value()?;
            self.skip_space();
            match self.next()? {
                b',' => {}
                b'}' => return Ok(()),
                c => return Err(Refusal::Char(c, "after object key:value pair")),
            }
        }
    }

    fn array(&mut self) -> Result<(), Refusal> {
        self.skip_space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.value()?;
            self.skip_space();
            match self.next()? {
                b',' => {}
                b']' => return Ok(()),
                c => return Err(Refusal::Char(c, "after array element")),
            }
        }
    }

    /// The rest of a string after its opening quote.
    fn string(&mut self) -> Result<(), Refusal> {
        loop {
            match self.next()? {
                b'"' => return Ok(()),
                b'\\' => match self.next()? {
                    b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {}
                    b'u' => {
                        for _ in 0..4 {
                            let c = self.next()?;
                            if !c.is_ascii_hexdigit() {
                                return Err(Refusal::Char(
                                    c,
                                    "in \\u hexadecimal character escape",
                                ));
                            }
                        }
                    }
                    c => return Err(Refusal::Char(c, "in string escape code")),
                },
                c if c < 0x20 => return Err(Refusal::Char(c, "in string literal")),
                _ => {}
            }
        }
    }

    /// The rest of a number after its first digit. The number ends at the first byte that
    /// cannot continue it; what follows is judged by the enclosing state.
    fn number(&mut self, first: u8) -> Result<(), Refusal> {
        if first != b'0' {
            self.digits();
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            match self.next()? {
                b'0'..=b'9' => self.digits(),
                c => return Err(Refusal::Char(c, "after decimal point in numeric literal")),
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            let mut c = self.next()?;
            if c == b'+' || c == b'-' {
                c = self.next()?;
            }
            if !c.is_ascii_digit() {
                return Err(Refusal::Char(c, "in exponent of numeric literal"));
            }
            self.digits();
        }
        Ok(())
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    /// The rest of `true`, `false` or `null` after its first letter.
    fn literal(&mut self, rest: &[u8], name: &'static str) -> Result<(), Refusal> {
        for &want in rest {
            let c = self.next()?;
            if c != want {
                return Err(Refusal::Char(c, literal_context(name, want)));
            }
        }
        Ok(())
    }
}

/// The scanner's phrase for a wrong letter inside a literal.
fn literal_context(name: &str, want: u8) -> &'static str {
    match (name, want) {
        ("true", b'r') => "in literal true (expecting 'r')",
        ("true", b'u') => "in literal true (expecting 'u')",
        ("true", _) => "in literal true (expecting 'e')",
        ("false", b'a') => "in literal false (expecting 'a')",
        ("false", b'l') => "in literal false (expecting 'l')",
        ("false", b's') => "in literal false (expecting 's')",
        ("false", _) => "in literal false (expecting 'e')",
        (_, b'u') => "in literal null (expecting 'u')",
        _ => "in literal null (expecting 'l')",
    }
}

/// A byte quoted as Go's scanner quotes it: the byte read as a Unicode code point, in single
/// quotes, escaped as Go's `strconv.Quote` escapes what it cannot print.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_string(),
        b'"' => "'\"'".to_string(),
        b'\\' => r"'\\'".to_string(),
        0x07 => r"'\a'".to_string(),
        0x08 => r"'\b'".to_string(),
        0x0c => r"'\f'".to_string(),
        b'\n' => r"'\n'".to_string(),
        b'\r' => r"'\r'".to_string(),
        b'\t' => r"'\t'".to_string(),
        0x0b => r"'\v'".to_string(),
        0x00..=0x1f | 0x7f => format!("'\\x{c:02x}'"),
        // C1 controls, the no-break space and the soft hyphen are not printable for Go.
        0x80..=0xa0 | 0xad => format!("'\\u{c:04x}'"),
        _ => format!("'{}'", char::from(c)),
    }
}

#[cfg(test)]
mod tests {
    use super::syntax_error;

    fn err(doc: &str) -> String {
        syntax_error(doc.as_bytes()).unwrap_or_default()
    }

    #[test]
    fn accepts_what_go_accepts() {
        for doc in [
            "{}",
            " [1, -2.5e+3, 0, true, false, null, \"a\\u00e9\\n\"] ",
            "{\"a\": {\"b\": []}}",
            "\"\u{e9}\"",
        ] {
            assert_eq!(syntax_error(doc.as_bytes()), None, "{doc}");
        }
    }

    #[test]
    fn words_errors_as_go_does() {
        assert_eq!(err("{\"metadata\": "), "unexpected end of JSON input");
        assert_eq!(err(""), "unexpected end of JSON input");
        assert_eq!(
            err("x"),
            "invalid character 'x' looking for beginning of value"
        );
        assert_eq!(
            err("{a}"),
            "invalid character 'a' looking for beginning of object key string"
        );
        assert_eq!(err("{\"a\" 1}"), "invalid character '1' after object key");
        assert_eq!(
            err("{\"a\": 1 \"b\"}"),
            "invalid character '\"' after object key:value pair"
        );
        assert_eq!(err("[1 2]"), "invalid character '2' after array element");
        assert_eq!(err("{} x"), "invalid character 'x' after top-level value");
        assert_eq!(err("-x"), "invalid character 'x' in numeric literal");
        assert_eq!(
            err("1.x"),
            "invalid character 'x' after decimal point in numeric literal"
        );
        assert_eq!(
            err("1ex"),
            "invalid character 'x' in exponent of numeric literal"
        );
        assert_eq!(err("tru"), "unexpected end of JSON input");
        assert_eq!(
            err("nul1"),
            "invalid character '1' in literal null (expecting 'l')"
        );
        assert_eq!(
            err("\"a\\q\""),
            "invalid character 'q' in string escape code"
        );
        assert_eq!(
            err("\"\\u12x4\""),
            "invalid character 'x' in \\u hexadecimal character escape"
        );
        assert_eq!(err("\"a\tb\""), "invalid character '\\t' in string literal");
        assert_eq!(err("01"), "invalid character '1' after top-level value");
    }

    #[test]
    fn quotes_bytes_as_go_does() {
        assert_eq!(
            err("\u{9e}"),
            "invalid character '\u{c2}' looking for beginning of value"
        );
        assert_eq!(
            syntax_error(&[0x9e]).unwrap_or_default(),
            "invalid character '\\u009e' looking for beginning of value"
        );
        assert_eq!(
            err("'a'"),
            "invalid character '\\'' looking for beginning of value"
        );
        assert_eq!(
            syntax_error(&[0x01]).unwrap_or_default(),
            "invalid character '\\x01' looking for beginning of value"
        );
    }
}
