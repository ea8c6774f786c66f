//! [`Action`]: what a controller does with a key after a successful reconcile
//! (controller-runtime's `reconcile.Result`).

use std::time::Duration;

use workqueue::Priority;

/// What the controller does with a key after a successful reconcile: nothing until the object
/// changes again ([`done`](Self::done)), or reconcile it again — after the key's rate-limited
/// backoff ([`requeue`](Self::requeue)) or after a delay
/// ([`requeue_after`](Self::requeue_after)) — optionally at another priority
/// ([`with_priority`](Self::with_priority)).
///
/// A requeued key keeps the priority it was handed out with (as after an error) unless the
/// action names another. Priorities matter only with the priority queue, the default (see
/// [`ControllerBuilder::priority_queue`](crate::controller::ControllerBuilder::priority_queue)).
///
/// ```
/// # use std::time::Duration;
/// # use controller_runtime::controller::{Action, Priority};
/// let check_again_later = Action::requeue_after(Duration::from_secs(300)).with_priority(Priority::LOW);
/// assert_eq!(check_again_later.requeue_delay(), Some(Duration::from_secs(300)));
/// assert_eq!(check_again_later.priority(), Some(Priority::LOW));
/// assert!(!Action::done().requeues());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[must_use]
pub struct Action {
    pub(crate) requeue: Requeue,
    pub(crate) priority: Option<Priority>,
}

/// Whether and when a key is reconciled again.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Requeue {
    /// Not until its next change: the key's backoff history is cleared.
    #[default]
    No,
    /// After the key's rate-limited backoff (as after an error, without counting one).
    Backoff,
    /// After this delay; the backoff history is cleared first.
    After(Duration),
}

impl Action {
    /// Nothing more to do until the next change: the key's backoff history is cleared.
    pub const fn done() -> Self {
        Self {
            requeue: Requeue::No,
            priority: None,
        }
    }

    /// Reconcile again after the key's rate-limited backoff (as after an error, but without
    /// counting an error).
    pub const fn requeue() -> Self {
        Self {
            requeue: Requeue::Backoff,
            priority: None,
        }
    }

    /// Reconcile again after `delay`; the key's backoff history is cleared first.
    pub const fn requeue_after(delay: Duration) -> Self {
        Self {
            requeue: Requeue::After(delay),
            priority: None,
        }
    }

    /// This action, queuing the key with `priority` if it requeues it (a `done` action stays
    /// as it is).
    pub const fn with_priority(self, priority: Priority) -> Self {
        match self.requeue {
            Requeue::No => self,
            _ => Self {
                requeue: self.requeue,
                priority: Some(priority),
            },
        }
    }

    /// Whether the key is reconciled again without a change.
    pub const fn requeues(&self) -> bool {
        !matches!(self.requeue, Requeue::No)
    }

    /// The delay before the key is reconciled again, for [`requeue_after`](Self::requeue_after).
    pub const fn requeue_delay(&self) -> Option<Duration> {
        match self.requeue {
            Requeue::After(delay) => Some(delay),
            _ => None,
        }
    }

    /// The priority the key is requeued with, if the action names one.
    pub const fn priority(&self) -> Option<Priority> {
        self.priority
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_priority_names_the_priority_of_requeues_only() {
        let second = Duration::from_secs(1);
        assert_eq!(Action::done().with_priority(Priority::LOW), Action::done());
        assert_eq!(Action::done().priority(), None);
        let requeue = Action::requeue().with_priority(Priority::LOW);
        assert!(requeue.requeues());
        assert_eq!(requeue.priority(), Some(Priority::LOW));
        assert_eq!(requeue.requeue_delay(), None);
        let later = Action::requeue_after(second)
            .with_priority(Priority::MAX)
            .with_priority(Priority::LOW);
        assert_eq!(later.requeue_delay(), Some(second));
        assert_eq!(later.priority(), Some(Priority::LOW));
        assert_eq!(Action::default(), Action::done());
    }
}
