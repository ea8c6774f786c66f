//! Relative times as printed in tables: the `AGE` of an object, the time since a restart,
//! a job's duration. Kubernetes renders them server-side with apimachinery's
//! `duration.HumanDuration`: seconds up to two minutes, then minutes (with seconds below ten
//! minutes), hours (with minutes below eight hours), days (with hours below eight days) and
//! years (with days below eight years).

use jiff::Timestamp;
use serde_json::Value;

const SECOND: i128 = 1_000_000_000;
const MINUTE: i128 = 60 * SECOND;
const HOUR: i128 = 60 * MINUTE;

/// The human-readable length of `nanos` nanoseconds (negative: a time in the future; up to
/// one second of clock skew still reads `0s`, more reads `<invalid>`).
pub fn human_duration(nanos: i128) -> String {
    let seconds = nanos / SECOND;
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = nanos / MINUTE;
    if minutes < 10 {
        return match seconds % 60 {
            0 => format!("{minutes}m"),
            s => format!("{minutes}m{s}s"),
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = nanos / HOUR;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            m => format!("{hours}h{m}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    let days = hours / 24;
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{days}d"),
            h => format!("{days}d{h}h"),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{days}d");
    }
    let years = days / 365;
    if hours < 24 * 365 * 8 {
        return match days % 365 {
            0 => format!("{years}y"),
            d => format!("{years}y{d}d"),
        };
    }
    format!("{years}y")
}

/// Parses an RFC 3339 timestamp (`metav1.Time` or `metav1.MicroTime`); `None` when absent,
/// null or malformed.
pub fn parse(v: Option<&Value>) -> Option<Timestamp> {
    v.and_then(Value::as_str)?.parse().ok()
}

/// Nanoseconds from `from` to `to`.
pub fn between(from: Timestamp, to: Timestamp) -> i128 {
    to.as_nanosecond() - from.as_nanosecond()
}

/// The time elapsed since `ts`, or `<unknown>` for a missing timestamp (upstream
/// `translateTimestampSince`).
pub fn since(ts: Option<&Value>, now: Timestamp) -> String {
    match parse(ts) {
        Some(t) => human_duration(between(t, now)),
        None => "<unknown>".into(),
    }
}

/// The `AGE` cell: the time since `metadata.creationTimestamp`.
pub fn age(obj: &Value, now: Timestamp) -> String {
    since(obj.pointer("/metadata/creationTimestamp"), now)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: i128) -> String {
        human_duration(s * SECOND)
    }

    #[test]
    fn human_durations_match_upstream_steps() {
        assert_eq!(secs(-5), "<invalid>");
        assert_eq!(human_duration(-SECOND - 1), "0s");
        assert_eq!(human_duration(-2 * SECOND), "<invalid>");
        assert_eq!(human_duration(-SECOND / 2), "0s");
        assert_eq!(secs(0), "0s");
        assert_eq!(secs(119), "119s");
        assert_eq!(secs(120), "2m");
        assert_eq!(secs(302), "5m2s");
        assert_eq!(secs(600), "10m");
        assert_eq!(secs(179 * 60 + 59), "179m");
        assert_eq!(secs(3 * 3600), "3h");
        assert_eq!(secs(3 * 3600 + 5 * 60 + 9), "3h5m");
        assert_eq!(secs(8 * 3600), "8h");
        assert_eq!(secs(47 * 3600), "47h");
        assert_eq!(secs(48 * 3600), "2d");
        assert_eq!(secs(50 * 3600), "2d2h");
        assert_eq!(secs(10 * 86400), "10d");
        assert_eq!(secs(730 * 86400), "2y");
        assert_eq!(secs(740 * 86400), "2y10d");
        assert_eq!(secs(9 * 365 * 86400), "9y");
    }

    #[test]
    fn since_missing_is_unknown() {
        let now = Timestamp::now();
        assert_eq!(since(None, now), "<unknown>");
        let t = serde_json::json!("1990-01-01T00:00:00Z");
        assert!(since(Some(&t), now).ends_with('y'));
    }
}
