//! Base64 errors as Go's `encoding/base64` reports them (`illegal base64 data at input byte
//! N`): the real server decodes `[]byte` fields (a Secret's `data`, a ConfigMap's
//! `binaryData`) with the standard, padded alphabet, and continue tokens with the URL-safe
//! one without padding, and answers with that message.

/// Go's error for `text` decoded with `base64.StdEncoding`, or `None` when Go decodes it.
/// Line breaks are skipped, as Go skips them.
pub fn std_decode_error(text: &str) -> Option<String> {
    corrupt_at(text.as_bytes(), Encoding::Std).map(message)
}

/// Go's error for `text` decoded with `base64.RawURLEncoding`, or `None` when Go decodes it.
pub fn raw_url_decode_error(text: &str) -> Option<String> {
    corrupt_at(text.as_bytes(), Encoding::RawUrl).map(message)
}

fn message(at: usize) -> String {
    format!("illegal base64 data at input byte {at}")
}

/// The two encodings the server decodes with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    /// `+` and `/`, padded with `=`.
    Std,
    /// `-` and `_`, no padding.
    RawUrl,
}

impl Encoding {
    fn has(self, c: u8) -> bool {
        c.is_ascii_alphanumeric()
            || match self {
                Self::Std => c == b'+' || c == b'/',
                Self::RawUrl => c == b'-' || c == b'_',
            }
    }
}

fn is_newline(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

/// The offset Go reports, quantum by quantum as its decoder reads them.
fn corrupt_at(src: &[u8], enc: Encoding) -> Option<usize> {
    let mut si = 0;
    loop {
        let mut j = 0;
        while j < 4 {
            let Some(&c) = src.get(si) else {
                // The input ended inside a quantum: padding was required, and without
                // padding a lone character is too few.
                return (j == 1 || (j != 0 && enc == Encoding::Std)).then_some(si - j);
            };
            si += 1;
            if enc.has(c) {
                j += 1;
                continue;
            }
            if is_newline(c) {
                continue;
            }
            if c != b'=' || enc == Encoding::RawUrl || j < 2 {
                return Some(si - 1);
            }
            if j == 2 {
                // "==" is expected; the first '=' is read.
                while src.get(si).copied().is_some_and(is_newline) {
                    si += 1;
                }
                match src.get(si) {
                    None => return Some(src.len()),
                    Some(b'=') => si += 1,
                    Some(_) => return Some(si - 1),
                }
            }
            while src.get(si).copied().is_some_and(is_newline) {
                si += 1;
            }
            // Padding ends the input; anything after it is garbage.
            return (si < src.len()).then_some(si);
        }
        if si == src.len() {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{raw_url_decode_error, std_decode_error};

    fn at(text: &str) -> Option<String> {
        std_decode_error(text)
    }

    #[test]
    fn accepts_standard_padded_text() {
        for ok in ["", "YQ==", "YWI=", "YWJj", "YWJj\nZGVm", "YW\r\nJj"] {
            assert_eq!(at(ok), None, "{ok:?}");
        }
    }

    #[test]
    fn reports_the_offset_go_reports() {
        let msg = |n: usize| Some(format!("illegal base64 data at input byte {n}"));
        assert_eq!(at("%%%"), msg(0));
        assert_eq!(at("YWJj%"), msg(4));
        // A quantum cut short without padding: the quantum's start.
        assert_eq!(at("YWJjZA"), msg(4));
        assert_eq!(at("YQ"), msg(0));
        // Padding too early, too short, or followed by more.
        assert_eq!(at("Y==="), msg(1));
        assert_eq!(at("YQ="), msg(3));
        assert_eq!(at("YQ=x"), msg(2));
        assert_eq!(at("YWI=YWJj"), msg(4));
        // URL-safe letters are not in the standard alphabet.
        assert_eq!(at("ab-_"), msg(2));
    }

    #[test]
    fn url_safe_without_padding() {
        let msg = |n: usize| Some(format!("illegal base64 data at input byte {n}"));
        assert_eq!(raw_url_decode_error("not-a-token"), None);
        assert_eq!(raw_url_decode_error("YQ"), None);
        assert_eq!(raw_url_decode_error("YWJjZ"), msg(4));
        assert_eq!(raw_url_decode_error("YQ=="), msg(2));
        assert_eq!(raw_url_decode_error("a+b"), msg(1));
    }
}
