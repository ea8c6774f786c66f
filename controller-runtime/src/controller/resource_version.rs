//! Ordering resource versions, as apimachinery's `CompareResourceVersion` does (KEP-5647): a
//! version is comparable only when it is a well-formed positive integer — ASCII digits, no
//! leading zero, any length — and two comparable versions order by length, then digit by digit.
//! Anything else (empty, `0`, a sign, letters, an opaque token of a server that is not etcd
//! backed) is not comparable, and the caller falls back to what it did without the comparison.

use std::cmp::Ordering;

/// A resource version that is not a well-formed positive integer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotComparable(pub(crate) String);

/// Whether `version` is a positive integer without a leading zero.
fn well_formed(version: &str) -> bool {
    !version.is_empty()
        && !version.starts_with('0')
        && version.bytes().all(|byte| byte.is_ascii_digit())
}

/// How `a` orders against `b`; the first of them that is not comparable otherwise.
pub(crate) fn compare(a: &str, b: &str) -> Result<Ordering, NotComparable> {
    for version in [a, b] {
        if !well_formed(version) {
            return Err(NotComparable(version.to_owned()));
        }
    }
    Ok(a.len().cmp(&b.len()).then_with(|| a.cmp(b)))
}

/// How many versions `cached` is behind `written` (0 when caught up, saturating at `u64::MAX`);
/// `None` when either is not comparable.
pub(crate) fn distance(cached: &str, written: &str) -> Option<u64> {
    match compare(cached, written).ok()? {
        Ordering::Less => Some(
            match (cached.parse::<u128>(), written.parse::<u128>()) {
                (Ok(cached), Ok(written)) => written - cached,
                _ => u128::MAX,
            }
            .try_into()
            .unwrap_or(u64::MAX),
        ),
        Ordering::Equal | Ordering::Greater => Some(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_well_formed_versions_by_length_then_digits() {
        assert_eq!(compare("10", "9"), Ok(Ordering::Greater));
        assert_eq!(compare("9", "10"), Ok(Ordering::Less));
        assert_eq!(compare("42", "42"), Ok(Ordering::Equal));
        assert_eq!(compare("123", "124"), Ok(Ordering::Less));
        // Longer than any integer type: still ordered.
        let huge = "18446744073709551616123456789012345678901";
        assert_eq!(compare(huge, "18446744073709551615"), Ok(Ordering::Greater));
    }

    #[test]
    fn refuses_what_is_not_a_positive_integer_without_leading_zeros() {
        for bad in ["", "0", "007", "-1", "+1", "1a", "abc", " 1", "1.0"] {
            assert_eq!(
                compare(bad, "5"),
                Err(NotComparable(bad.to_owned())),
                "{bad:?}"
            );
            assert_eq!(
                compare("5", bad),
                Err(NotComparable(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn measures_how_far_behind_a_cache_is() {
        assert_eq!(distance("5", "8"), Some(3));
        assert_eq!(distance("9", "8"), Some(0));
        assert_eq!(distance("8", "8"), Some(0));
        assert_eq!(distance("x", "8"), None);
        let huge = "999999999999999999999999999999999999999999";
        assert_eq!(distance("1", huge), Some(u64::MAX));
    }
}
