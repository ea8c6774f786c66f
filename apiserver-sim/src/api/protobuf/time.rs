//! The JSON forms of `meta/v1` `Time` (RFC 3339 in seconds), `MicroTime` (RFC 3339 in
//! microseconds) and `Duration` (Go's duration string), to and from their protobuf
//! fields (seconds and nanoseconds; nanoseconds).

use jiff::Timestamp;

/// RFC 3339 in UTC, in seconds or (`micro`) microseconds; None when out of range.
pub fn format(secs: i64, nanos: i64, micro: bool) -> Option<String> {
    let ts = Timestamp::from_second(secs).ok()?;
    let base = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
    Some(if micro {
        format!("{base}.{:06}Z", nanos.clamp(0, 999_999_999) / 1000)
    } else {
        format!("{base}Z")
    })
}

/// (seconds, nanoseconds) of an RFC 3339 time.
pub fn parse(s: &str) -> Option<(i64, i32)> {
    let ts: Timestamp = s.parse().ok()?;
    Some((ts.as_second(), ts.subsec_nanosecond()))
}

/// Writes `v / unit` with the fraction of `v % unit`, trailing zeros trimmed.
fn fraction(v: u64, unit: u64) -> String {
    let (int, rem) = (v / unit, v % unit);
    if rem == 0 {
        return int.to_string();
    }
    let width = unit.ilog10() as usize;
    let digits = format!("{rem:0width$}");
    format!("{int}.{}", digits.trim_end_matches('0'))
}

/// A duration in nanoseconds as Go prints it (`1h2m3.5s`, `300ms`, `0s`).
pub fn format_duration(ns: i64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let sign = if ns < 0 { "-" } else { "" };
    let u = ns.unsigned_abs();
    const S: u64 = 1_000_000_000;
    let body = if u < 1_000 {
        format!("{u}ns")
    } else if u < 1_000_000 {
        format!("{}µs", fraction(u, 1_000))
    } else if u < S {
        format!("{}ms", fraction(u, 1_000_000))
    } else {
        let (h, m) = (u / (3600 * S), (u / (60 * S)) % 60);
        let secs = fraction(u % (60 * S), S);
        match (h, m) {
            (0, 0) => format!("{secs}s"),
            (0, m) => format!("{m}m{secs}s"),
            (h, m) => format!("{h}h{m}m{secs}s"),
        }
    };
    format!("{sign}{body}")
}

/// Nanoseconds of a Go duration string (`1h30m`, `1.5s`, `-2ms`).
pub fn parse_duration(s: &str) -> Option<i64> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(0);
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let n: f64 = rest[..num_end].parse().ok()?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        total += n * scale;
        rest = &rest[unit_end..];
    }
    let ns = if neg { -total } else { total };
    (ns.abs() < 9.2e18).then_some(ns.round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_durations() {
        assert_eq!(
            format(1_700_000_000, 5_000, false).as_deref(),
            Some("2023-11-14T22:13:20Z")
        );
        assert_eq!(
            format(1_700_000_000, 123_456_789, true).as_deref(),
            Some("2023-11-14T22:13:20.123456Z")
        );
        assert_eq!(
            parse("2023-11-14T22:13:20.5Z"),
            Some((1_700_000_000, 500_000_000))
        );
        assert_eq!(parse("nope"), None);
        for (ns, s) in [
            (0, "0s"),
            (1_500_000_000, "1.5s"),
            (300_000_000, "300ms"),
            (3_723_000_000_000, "1h2m3s"),
            (60_000_000_000, "1m0s"),
            (-2_000, "-2µs"),
        ] {
            assert_eq!(format_duration(ns), s);
            assert_eq!(parse_duration(s), Some(ns), "{s}");
        }
        assert_eq!(parse_duration("1x"), None);
    }
}
