//! Polling with a deadline: how a test waits for something to happen without sleeping for a
//! fixed time.

use std::future::Future;
use std::time::Duration;

/// How long [`eventually`] and [`eventually_some`] wait in real time at least, whatever their
/// limit in tokio time.
///
/// In a paused-time test tokio's clock jumps to the next timer whenever the runtime waits only
/// for I/O, so on a loaded machine slow loopback round trips to the simulator can use up a limit
/// of minutes of tokio time within milliseconds. The floor keeps such a test from failing early;
/// it never makes a passing condition wait longer.
pub const WALL_CLOCK_FLOOR: Duration = Duration::from_secs(20);

/// How often a condition is polled, in tokio time.
const POLL_EVERY: Duration = Duration::from_millis(10);

/// Polls `condition` every 10 ms (of tokio time) until it holds. Panics with "timed out waiting
/// for {what}" once both `limit` of tokio time (instant in paused tests) and
/// [`WALL_CLOCK_FLOOR`] of real time have passed.
pub async fn eventually(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    eventually_some(what, limit, || {
        std::future::ready(condition().then_some(()))
    })
    .await
}

/// Polls the async `condition` every 10 ms (of tokio time) until it holds. Panics like
/// [`eventually`] when the deadline passes.
pub async fn eventually_async<F, Fut>(what: &str, limit: Duration, mut condition: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    eventually_some(what, limit, || {
        let holds = condition();
        async move { holds.await.then_some(()) }
    })
    .await
}

/// Polls the async `check` every 10 ms (of tokio time) until it returns `Some`, and returns that
/// value. Panics like [`eventually`] when the deadline passes.
pub async fn eventually_some<T, F, Fut>(what: &str, limit: Duration, check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    poll(what, limit, WALL_CLOCK_FLOOR, check).await
}

/// [`eventually_some`] with the real-time floor as a parameter.
async fn poll<T, F, Fut>(what: &str, limit: Duration, floor: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    let wall_clock_deadline = std::time::Instant::now() + floor;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            tokio::time::Instant::now() < deadline
                || std::time::Instant::now() < wall_clock_deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(POLL_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test(start_paused = true)]
    async fn returns_as_soon_as_the_condition_holds() {
        let polls = AtomicUsize::new(0);
        eventually("the third poll", Duration::from_secs(1), || {
            polls.fetch_add(1, Ordering::SeqCst) == 2
        })
        .await;
        assert_eq!(polls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn hands_back_the_value_found() {
        let mut n = 0;
        let found = eventually_some("n to reach 4", Duration::from_secs(1), || {
            n += 1;
            std::future::ready((n == 4).then_some(n * 10))
        })
        .await;
        assert_eq!(found, 40);
    }

    #[test]
    fn panics_naming_what_it_waited_for() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let outcome = std::panic::catch_unwind(|| {
            runtime.block_on(poll(
                "nothing",
                Duration::from_secs(1),
                Duration::ZERO,
                || std::future::ready(None::<()>),
            ))
        });
        let message = *outcome.unwrap_err().downcast::<String>().unwrap();
        assert!(message.contains("waiting for nothing"), "{message}");
    }
}
