//! Status conditions (apimachinery's `meta.SetStatusCondition` and its companions) on the
//! `Vec<Condition>` a custom resource's status keeps: set one by type, find it, remove it, and
//! ask whether it is `True`.
//!
//! ```
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
//! use k8s_openapi::jiff::Timestamp;
//! use controller_runtime::util::{
//!     find_status_condition, is_status_condition_true, set_status_condition,
//! };
//!
//! let mut conditions: Vec<Condition> = Vec::new();
//! let ready = |status: &str, reason: &str| Condition {
//!     type_: "Ready".into(),
//!     status: status.into(),
//!     reason: reason.into(),
//!     message: String::new(),
//!     observed_generation: Some(3),
//!     // Unset (the epoch): stamped with the current time when the status changes.
//!     last_transition_time: Time(Timestamp::UNIX_EPOCH),
//! };
//! assert!(set_status_condition(&mut conditions, ready("False", "Deploying")));
//! let since = find_status_condition(&conditions, "Ready").map(|c| c.last_transition_time.clone());
//!
//! // Same status, another reason: updated, but the transition time stays.
//! assert!(set_status_condition(&mut conditions, ready("False", "Waiting")));
//! assert_eq!(find_status_condition(&conditions, "Ready").map(|c| c.last_transition_time.clone()), since);
//! // Nothing new: nothing changes (no status write needed).
//! assert!(!set_status_condition(&mut conditions, ready("False", "Waiting")));
//!
//! assert!(set_status_condition(&mut conditions, ready("True", "Available")));
//! assert!(is_status_condition_true(&conditions, "Ready"));
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// A condition's status `True`.
pub const CONDITION_TRUE: &str = "True";
/// A condition's status `False`.
pub const CONDITION_FALSE: &str = "False";
/// A condition's status `Unknown`.
pub const CONDITION_UNKNOWN: &str = "Unknown";

/// Sets `new` in `conditions`, by its type; returns whether anything changed (so whether the
/// status needs writing).
///
/// A condition of a new type is added. For an existing one, the status, reason, message and
/// observed generation are updated, and `lastTransitionTime` only when the status changes: then
/// it becomes `new`'s. A `new` whose `last_transition_time` is unset — the Unix epoch,
/// `Time(Timestamp::UNIX_EPOCH)`, standing for Go's zero time — is stamped with the current
/// time when it is used.
pub fn set_status_condition(conditions: &mut Vec<Condition>, mut new: Condition) -> bool {
    let Some(existing) = find_status_condition_mut(conditions, &new.type_) else {
        stamp(&mut new.last_transition_time);
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        stamp(&mut new.last_transition_time);
        existing.last_transition_time = new.last_transition_time;
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// An unset transition time (the epoch) becomes the current time.
fn stamp(time: &mut Time) {
    if time.0 == Timestamp::UNIX_EPOCH {
        *time = Time(Timestamp::now());
    }
}

/// Removes the condition of `type_`; returns whether there was one.
pub fn remove_status_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|condition| condition.type_ != type_);
    conditions.len() != before
}

/// The condition of `type_`, if any.
pub fn find_status_condition<'a>(
    conditions: &'a [Condition],
    type_: &str,
) -> Option<&'a Condition> {
    conditions.iter().find(|condition| condition.type_ == type_)
}

/// The condition of `type_`, if any, to change in place.
pub fn find_status_condition_mut<'a>(
    conditions: &'a mut [Condition],
    type_: &str,
) -> Option<&'a mut Condition> {
    conditions
        .iter_mut()
        .find(|condition| condition.type_ == type_)
}

/// Whether the condition of `type_` is present with status `True`.
pub fn is_status_condition_true(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, CONDITION_TRUE)
}

/// Whether the condition of `type_` is present with status `False`.
pub fn is_status_condition_false(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, CONDITION_FALSE)
}

/// Whether the condition of `type_` is present with status `status`.
pub fn is_status_condition_present_and_equal(
    conditions: &[Condition],
    type_: &str,
    status: &str,
) -> bool {
    find_status_condition(conditions, type_).is_some_and(|condition| condition.status == status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Time {
        Time(Timestamp::from_second(seconds).unwrap())
    }

    fn condition(type_: &str, status: &str, reason: &str, time: Time) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: format!("{reason} message"),
            observed_generation: Some(1),
            last_transition_time: time,
        }
    }

    #[test]
    fn a_new_type_is_added_with_its_time() {
        let mut conditions = vec![condition("Ready", "True", "Up", at(10))];
        assert!(set_status_condition(
            &mut conditions,
            condition("Degraded", "False", "Fine", at(20))
        ));
        assert_eq!(conditions.len(), 2);
        assert_eq!(conditions[1].last_transition_time, at(20));
        assert_eq!(conditions[1].type_, "Degraded");
    }

    #[test]
    fn the_transition_time_moves_only_with_the_status() {
        let mut conditions = vec![condition("Ready", "False", "Deploying", at(10))];
        let mut update = condition("Ready", "False", "Waiting", at(20));
        update.observed_generation = Some(2);
        assert!(set_status_condition(&mut conditions, update));
        let ready = &conditions[0];
        assert_eq!(ready.last_transition_time, at(10), "same status: time kept");
        assert_eq!(ready.reason, "Waiting");
        assert_eq!(ready.message, "Waiting message");
        assert_eq!(ready.observed_generation, Some(2));

        assert!(set_status_condition(
            &mut conditions,
            condition("Ready", "True", "Up", at(30))
        ));
        assert_eq!(conditions[0].last_transition_time, at(30), "status changed");
        assert_eq!(conditions[0].status, "True");
        assert_eq!(conditions.len(), 1);
    }

    #[test]
    fn setting_the_same_condition_changes_nothing() {
        let mut conditions = vec![condition("Ready", "True", "Up", at(10))];
        assert!(!set_status_condition(
            &mut conditions,
            condition("Ready", "True", "Up", at(99))
        ));
        assert_eq!(conditions, vec![condition("Ready", "True", "Up", at(10))]);
    }

    #[test]
    fn an_unset_time_is_stamped_with_now_only_when_used() {
        let before = Timestamp::now();
        let mut conditions = Vec::new();
        set_status_condition(&mut conditions, condition("Ready", "False", "New", at(0)));
        assert!(conditions[0].last_transition_time.0 >= before);
        let stamped = conditions[0].last_transition_time.clone();
        set_status_condition(&mut conditions, condition("Ready", "False", "Other", at(0)));
        assert_eq!(conditions[0].last_transition_time, stamped);
    }

    #[test]
    fn find_remove_and_status_checks() {
        let mut conditions = vec![
            condition("Ready", "True", "Up", at(1)),
            condition("Degraded", "False", "Fine", at(2)),
            condition("Progressing", "Unknown", "Maybe", at(3)),
        ];
        assert!(is_status_condition_true(&conditions, "Ready"));
        assert!(!is_status_condition_false(&conditions, "Ready"));
        assert!(is_status_condition_false(&conditions, "Degraded"));
        assert!(is_status_condition_present_and_equal(
            &conditions,
            "Progressing",
            CONDITION_UNKNOWN
        ));
        assert!(!is_status_condition_true(&conditions, "Missing"));
        assert!(!is_status_condition_false(&conditions, "Missing"));
        if let Some(degraded) = find_status_condition_mut(&mut conditions, "Degraded") {
            degraded.message = "edited".into();
        }
        assert_eq!(
            find_status_condition(&conditions, "Degraded").map(|c| c.message.as_str()),
            Some("edited")
        );
        assert!(remove_status_condition(&mut conditions, "Degraded"));
        assert!(!remove_status_condition(&mut conditions, "Degraded"));
        assert!(find_status_condition(&conditions, "Degraded").is_none());
        assert_eq!(conditions.len(), 2);
    }
}
