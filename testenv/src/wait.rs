//! [`eventually`]: poll a condition until it holds or a deadline passes, with a message that says
//! what was awaited and what the condition last reported.

use std::fmt::Display;
use std::future::Future;
use std::time::Duration;

use crate::error::Error;

/// How long [`TestEnv`](crate::TestEnv) waits for a condition unless told otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
/// How often a condition is polled.
pub const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// What a polled condition returns: whether it holds, and if so with which value.
///
/// `bool` holds when `true`; `Option<T>` when `Some` (yielding the `T`); `Result<O, E>` when it
/// is `Ok` with an outcome that holds — `Ok(true)`, `Ok(Some(value))` — and its last `Err` is
/// quoted in the timeout error. So `api.get_opt(name).await` waits for the object to exist, and a
/// plain `api.get(name).await` (a `Result` of an object, not of an outcome) does not compile:
/// write `api.get(name).await.ok()`, or `.map(Some)` to keep its errors in the message.
pub trait Outcome {
    /// The value a holding condition yields.
    type Value;
    /// `Ok(value)` if the condition holds; otherwise what to report if it never does.
    fn into_result(self) -> Result<Self::Value, Option<String>>;
}

impl Outcome for bool {
    type Value = ();
    fn into_result(self) -> Result<(), Option<String>> {
        if self { Ok(()) } else { Err(None) }
    }
}

impl<T> Outcome for Option<T> {
    type Value = T;
    fn into_result(self) -> Result<T, Option<String>> {
        self.ok_or(None)
    }
}

impl<O: Outcome, E: Display> Outcome for Result<O, E> {
    type Value = O::Value;
    fn into_result(self) -> Result<O::Value, Option<String>> {
        self.map_err(|error| Some(error.to_string()))?.into_result()
    }
}

/// Polls `check` every [`POLL_INTERVAL`] until it holds (see [`Outcome`]) and returns its value;
/// after `timeout`, [`Error::Timeout`] naming `what` and the condition's last error. Uses tokio's
/// clock, so it also works in tests with paused time.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), testenv::Error> {
/// use std::time::Duration;
/// let mut polls = 0;
/// let third = testenv::eventually("the third poll", Duration::from_secs(5), || {
///     polls += 1;
///     let reached = polls == 3;
///     async move { reached.then_some(polls) }
/// })
/// .await?;
/// assert_eq!(third, 3);
/// # Ok(()) }
/// ```
pub async fn eventually<O, F, Fut>(
    what: impl Into<String>,
    timeout: Duration,
    mut check: F,
) -> Result<O::Value, Error>
where
    O: Outcome,
    F: FnMut() -> Fut,
    Fut: Future<Output = O>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let last = match check().await.into_result() {
            Ok(value) => return Ok(value),
            Err(last) => last,
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::Timeout {
                what: what.into(),
                timeout,
                last,
            });
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}
