//! A reader of DER, the distinguished encoding of ASN.1, with just what an X.509 certificate
//! needs: tag-length-value elements with one-byte tags, object identifiers, integers, bit
//! strings, strings and times. Every read is bounds-checked; malformed input is an error
//! naming what was expected, never a panic.

/// Universal and context tags the certificate reader uses.
pub(crate) mod tag {
    /// BOOLEAN.
    pub const BOOLEAN: u8 = 0x01;
    /// INTEGER.
    pub const INTEGER: u8 = 0x02;
    /// BIT STRING.
    pub const BIT_STRING: u8 = 0x03;
    /// OCTET STRING.
    pub const OCTET_STRING: u8 = 0x04;
    /// OBJECT IDENTIFIER.
    pub const OID: u8 = 0x06;
    /// UTCTime.
    pub const UTC_TIME: u8 = 0x17;
    /// GeneralizedTime.
    pub const GENERALIZED_TIME: u8 = 0x18;
    /// SEQUENCE (constructed).
    pub const SEQUENCE: u8 = 0x30;
    /// SET (constructed).
    pub const SET: u8 = 0x31;
    /// A context-specific constructed tag `[n]`.
    pub const fn explicit(n: u8) -> u8 {
        0xa0 | n
    }
    /// A context-specific primitive tag `[n]` (IMPLICIT of a primitive type).
    pub const fn implicit(n: u8) -> u8 {
        0x80 | n
    }
}

/// One element: its tag, its content, and its whole encoding (header included).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Element<'a> {
    /// The one-byte tag.
    pub tag: u8,
    /// The content octets.
    pub value: &'a [u8],
    /// Header and content, as they appear in the input.
    pub whole: &'a [u8],
}

/// Reads elements one after another from a byte slice.
#[derive(Debug, Clone)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// A reader over `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { rest: bytes }
    }

    /// Whether every element has been read.
    pub fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    /// The next element, whatever its tag.
    pub fn next_element(&mut self) -> Result<Element<'a>, String> {
        let input = self.rest;
        let (&tag, after_tag) = input.split_first().ok_or("unexpected end of data")?;
        if tag & 0x1f == 0x1f {
            return Err("multi-byte tags are not used in certificates".into());
        }
        let (&first, mut after_len) = after_tag.split_first().ok_or("missing length")?;
        let len = if first < 0x80 {
            usize::from(first)
        } else {
            let count = usize::from(first & 0x7f);
            if count == 0 || count > 4 || after_len.len() < count {
                return Err("unsupported or truncated length".into());
            }
            let (len_bytes, rest) = after_len.split_at(count);
            after_len = rest;
            len_bytes
                .iter()
                .fold(0usize, |acc, &b| (acc << 8) | usize::from(b))
        };
        if after_len.len() < len {
            return Err("element longer than its input".into());
        }
        let header = input.len() - after_len.len();
        let (whole, rest) = input.split_at(header + len);
        self.rest = rest;
        Ok(Element {
            tag,
            value: &whole[header..],
            whole,
        })
    }

    /// The next element, which must have tag `want`.
    pub fn expect(&mut self, want: u8, what: &str) -> Result<Element<'a>, String> {
        let element = self
            .next_element()
            .map_err(|e| format!("reading {what}: {e}"))?;
        if element.tag != want {
            return Err(format!(
                "reading {what}: tag {:#04x} instead of {want:#04x}",
                element.tag
            ));
        }
        Ok(element)
    }

    /// The next element if it has tag `want`; nothing (and nothing read) otherwise.
    pub fn optional(&mut self, want: u8, what: &str) -> Result<Option<Element<'a>>, String> {
        if self.rest.first() == Some(&want) {
            self.expect(want, what).map(Some)
        } else {
            Ok(None)
        }
    }

    /// The elements inside a constructed element with tag `want`.
    pub fn enter(&mut self, want: u8, what: &str) -> Result<Reader<'a>, String> {
        self.expect(want, what).map(|e| Reader::new(e.value))
    }
}

/// An OBJECT IDENTIFIER's content in dotted form (`2.5.29.19`).
pub(crate) fn oid(value: &[u8]) -> Result<String, String> {
    let mut arcs: Vec<u64> = Vec::new();
    let mut current: u64 = 0;
    for (i, &byte) in value.iter().enumerate() {
        if current > (u64::MAX >> 7) {
            return Err("object identifier arc too large".into());
        }
        current = (current << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            if arcs.is_empty() {
                let (first, second) = match current {
                    0..40 => (0, current),
                    40..80 => (1, current - 40),
                    _ => (2, current - 80),
                };
                arcs.extend([first, second]);
            } else {
                arcs.push(current);
            }
            current = 0;
        } else if i + 1 == value.len() {
            return Err("truncated object identifier".into());
        }
    }
    if arcs.is_empty() {
        return Err("empty object identifier".into());
    }
    Ok(arcs
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join("."))
}

/// A BIT STRING's bits (the content after its unused-bits count).
pub(crate) fn bits(value: &[u8]) -> Result<&[u8], String> {
    match value.split_first() {
        Some((&unused, bits)) if unused < 8 && !(bits.is_empty() && unused != 0) => Ok(bits),
        _ => Err("malformed bit string".into()),
    }
}

/// A BOOLEAN's value.
pub(crate) fn boolean(value: &[u8]) -> Result<bool, String> {
    match value {
        [0x00] => Ok(false),
        [0xff] => Ok(true),
        _ => Err("malformed boolean".into()),
    }
}

/// A non-negative INTEGER that fits in a `u32`.
pub(crate) fn small_unsigned(value: &[u8]) -> Result<u32, String> {
    let digits = match value {
        [] => return Err("empty integer".into()),
        [first, ..] if first & 0x80 != 0 => return Err("negative integer".into()),
        [0, rest @ ..] if !rest.is_empty() => rest,
        all => all,
    };
    if digits.len() > 4 {
        return Err("integer too large".into());
    }
    Ok(digits
        .iter()
        .fold(0u32, |acc, &b| (acc << 8) | u32::from(b)))
}

/// An INTEGER in decimal (a certificate's serial number, of up to 20 bytes or more), as Go's
/// `big.Int.String` writes it.
pub(crate) fn decimal(value: &[u8]) -> String {
    let negative = value.first().is_some_and(|b| b & 0x80 != 0);
    // Two's complement: the magnitude of a negative number is its complement plus one.
    let mut magnitude: Vec<u8> = if negative {
        let mut inverted: Vec<u8> = value.iter().map(|b| !b).collect();
        for byte in inverted.iter_mut().rev() {
            let (sum, carry) = byte.overflowing_add(1);
            *byte = sum;
            if !carry {
                break;
            }
        }
        inverted
    } else {
        value.to_vec()
    };
    let mut digits = Vec::new();
    while magnitude.iter().any(|&b| b != 0) {
        let mut remainder: u16 = 0;
        for byte in magnitude.iter_mut() {
            let current = (remainder << 8) | u16::from(*byte);
            *byte = u8::try_from(current / 10).unwrap_or(u8::MAX);
            remainder = current % 10;
        }
        digits.push(char::from(b'0' + u8::try_from(remainder).unwrap_or(0)));
    }
    if digits.is_empty() {
        digits.push('0');
    }
    if negative {
        digits.push('-');
    }
    digits.iter().rev().collect()
}

/// A string-typed value (UTF8String, PrintableString, IA5String, T61String) as text;
/// other types are not text.
pub(crate) fn text(element: &Element<'_>) -> Option<String> {
    match element.tag {
        0x0c | 0x13 | 0x16 | 0x14 => std::str::from_utf8(element.value).ok().map(str::to_string),
        _ => None,
    }
}

/// A UTCTime or GeneralizedTime (UTC, whole seconds, `Z`) as Unix seconds.
pub(crate) fn time(element: &Element<'_>) -> Result<i64, String> {
    let text = std::str::from_utf8(element.value).map_err(|_| "time is not ASCII")?;
    let digits = text
        .strip_suffix('Z')
        .filter(|d| d.bytes().all(|b| b.is_ascii_digit()))
        .ok_or_else(|| format!("time {text:?} is not in UTC"))?;
    let field = |range: std::ops::Range<usize>| -> Result<i64, String> {
        digits
            .get(range)
            .and_then(|d| d.parse::<i64>().ok())
            .ok_or_else(|| format!("malformed time {text:?}"))
    };
    let (year, rest) = match (element.tag, digits.len()) {
        (tag::UTC_TIME, 12) => {
            let yy = field(0..2)?;
            (if yy < 50 { 2000 + yy } else { 1900 + yy }, 2)
        }
        (tag::GENERALIZED_TIME, 14) => (field(0..4)?, 4),
        _ => return Err(format!("malformed time {text:?}")),
    };
    let part = |n: usize| field(rest + 2 * n..rest + 2 * n + 2);
    let as_i8 = |v: i64| i8::try_from(v).map_err(|_| format!("malformed time {text:?}"));
    let year = i16::try_from(year).map_err(|_| format!("malformed time {text:?}"))?;
    let datetime = jiff::civil::DateTime::new(
        year,
        as_i8(part(0)?)?,
        as_i8(part(1)?)?,
        as_i8(part(2)?)?,
        as_i8(part(3)?)?,
        as_i8(part(4)?)?,
        0,
    )
    .map_err(|e| format!("malformed time {text:?}: {e}"))?;
    datetime
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map(|z| z.timestamp().as_second())
        .map_err(|e| format!("malformed time {text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_short_and_long_and_truncated() {
        let mut short = Reader::new(&[0x04, 0x02, 0xaa, 0xbb, 0x05, 0x00]);
        let first = short.next_element().unwrap();
        assert_eq!((first.tag, first.value), (0x04, &[0xaa, 0xbb][..]));
        assert_eq!(first.whole.len(), 4);
        assert_eq!(short.next_element().unwrap().tag, 0x05);
        assert!(short.is_empty());

        let mut long = vec![0x04, 0x81, 200];
        long.extend(std::iter::repeat_n(7u8, 200));
        assert_eq!(Reader::new(&long).next_element().unwrap().value.len(), 200);

        assert!(Reader::new(&[0x04, 0x05, 1, 2]).next_element().is_err());
        assert!(Reader::new(&[0x04, 0x80]).next_element().is_err());
        assert!(Reader::new(&[0x04]).next_element().is_err());
        assert!(Reader::new(&[]).next_element().is_err());
        assert!(Reader::new(&[0x30, 0x01]).expect(0x04, "x").is_err());
    }

    #[test]
    fn object_identifiers_and_integers() {
        assert_eq!(oid(&[0x55, 0x1d, 0x13]).unwrap(), "2.5.29.19");
        assert_eq!(
            oid(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x0b]).unwrap(),
            "1.2.840.113549.1.1.11"
        );
        assert!(oid(&[0x2a, 0x86]).is_err());
        assert!(oid(&[]).is_err());
        assert_eq!(decimal(&[0x00, 0xff]), "255");
        assert_eq!(decimal(&[0x01, 0x00]), "256");
        assert_eq!(decimal(&[0x00]), "0");
        assert_eq!(decimal(&[0xff]), "-1");
        assert_eq!(
            decimal(&[0x0d, 0xe0, 0xb6, 0xb3, 0xa7, 0x64, 0x00, 0x00]),
            "1000000000000000000"
        );
        assert_eq!(small_unsigned(&[0x00, 0x80]).unwrap(), 128);
        assert!(small_unsigned(&[0x80]).is_err());
        assert_eq!(boolean(&[0xff]), Ok(true));
        assert!(boolean(&[0x01, 0x02]).is_err());
        assert_eq!(bits(&[0x00, 0x04]).unwrap(), &[0x04]);
        assert!(bits(&[0x08, 0x04]).is_err());
    }

    #[test]
    fn utc_and_generalized_times() {
        fn at(tag: u8, text: &'static str) -> Element<'static> {
            Element {
                tag,
                value: text.as_bytes(),
                whole: &[],
            }
        }
        let utc = |text| at(tag::UTC_TIME, text);
        let general = |text| at(tag::GENERALIZED_TIME, text);
        assert_eq!(time(&utc("700101000000Z")), Ok(0));
        assert_eq!(time(&utc("491231235959Z")), Ok(2_524_607_999));
        assert_eq!(time(&general("20500101000000Z")), Ok(2_524_608_000));
        assert!(time(&utc("700101000000+0100")).is_err());
        assert!(time(&utc("701301000000Z")).is_err());
        assert!(time(&general("2050010100000Z")).is_err());
    }
}
