//! What an add to a [`PriorityQueue`](crate::PriorityQueue) carries: the item's [`Priority`]
//! and, in [`AddOptions`], whether it waits first (a delay, or a rate-limited retry).

use std::fmt;
use std::time::Duration;

use crate::error::Error;

/// The priority of an item in a [`PriorityQueue`](crate::PriorityQueue): a higher value goes
/// out first.
///
/// The values are those of controller-runtime's priority queue: [`NORMAL`](Priority::NORMAL)
/// (0) is what an add without a priority gets, [`LOW`](Priority::LOW) (−100) what
/// controller-runtime gives the events of an informer's initial list and of resyncs.
/// A priority lies within [`MIN`](Priority::MIN) ..= [`MAX`](Priority::MAX) (−1000 ..= 1000):
/// ten times the room of the two standard values on either side, while a value such as
/// `i32::MAX` (usually a mistake for "urgent") is refused. Priorities are meant to be few: each
/// one used is a series of the `workqueue_depth` metric.
///
/// ```
/// use workqueue::Priority;
///
/// let urgent = Priority::new(10)?;
/// assert!(urgent > Priority::NORMAL && Priority::NORMAL > Priority::LOW);
/// assert_eq!(urgent.get(), 10);
/// assert!(Priority::new(5000).is_err());
/// # Ok::<(), workqueue::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Priority(i32);

impl Priority {
    /// The lowest priority there is.
    pub const MIN: Priority = Priority(-1000);
    /// controller-runtime's `LowPriority`: the events of an informer's initial list and of its
    /// resyncs, which usually need nothing.
    pub const LOW: Priority = Priority(-100);
    /// The priority of an add that names none.
    pub const NORMAL: Priority = Priority(0);
    /// The highest priority there is.
    pub const MAX: Priority = Priority(1000);

    /// The priority `value`; an error if it lies outside [`MIN`](Priority::MIN) ..=
    /// [`MAX`](Priority::MAX).
    pub const fn new(value: i32) -> Result<Self, Error> {
        if value < Self::MIN.0 || value > Self::MAX.0 {
            return Err(Error::PriorityOutOfRange { value });
        }
        Ok(Self(value))
    }

    /// The priority as a number.
    pub const fn get(self) -> i32 {
        self.0
    }
}

impl TryFrom<i32> for Priority {
    type Error = Error;

    fn try_from(value: i32) -> Result<Self, Error> {
        Self::new(value)
    }
}

impl From<Priority> for i32 {
    fn from(priority: Priority) -> i32 {
        priority.0
    }
}

impl fmt::Display for Priority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// How [`PriorityQueue::add_with`](crate::PriorityQueue::add_with) adds an item: its priority,
/// and whether it waits first.
///
/// Built from [`AddOptions::new`] (normal priority, ready now) with chained setters:
///
/// ```
/// use std::time::Duration;
/// use workqueue::{AddOptions, Priority};
///
/// let retry = AddOptions::new().priority(Priority::LOW).rate_limited();
/// let later = AddOptions::new().after(Duration::from_secs(30));
/// # let _ = (retry, later);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AddOptions {
    pub(crate) priority: Priority,
    pub(crate) after: Option<Duration>,
    pub(crate) rate_limited: bool,
}

impl AddOptions {
    /// Normal priority, ready now.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds with `priority` instead of [`Priority::NORMAL`].
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// Makes the item ready only once `delay` has passed (at once if it is zero), as
    /// [`add_after`](crate::PriorityQueue::add_after) does. Counts one retry in the metrics.
    pub fn after(mut self, delay: Duration) -> Self {
        self.after = Some(delay);
        self
    }

    /// Makes the item wait as long as the queue's rate limiter says, as
    /// [`add_rate_limited`](crate::PriorityQueue::add_rate_limited) does. Together with
    /// [`after`](AddOptions::after), a non-zero delay given there caps the limiter's
    /// (controller-runtime's rule).
    pub fn rate_limited(mut self) -> Self {
        self.rate_limited = true;
        self
    }

    /// The priority the item is added with.
    pub fn get_priority(&self) -> Priority {
        self.priority
    }

    /// The delay given with [`after`](AddOptions::after), if any.
    pub fn delay(&self) -> Option<Duration> {
        self.after
    }

    /// Whether the add is a rate-limited retry ([`rate_limited`](AddOptions::rate_limited)).
    pub fn is_rate_limited(&self) -> bool {
        self.rate_limited
    }
}
