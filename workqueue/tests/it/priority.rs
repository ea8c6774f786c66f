//! The priority queue's documented behaviour, example by example: order, re-adds, waiting
//! items, rate-limited retries, shutdown and its timer task. The model test
//! (`priority_model`) checks the same rules on random operation sequences.

use std::time::Duration;

use tokio::time::Instant;
use workqueue::{
    AddOptions, Error, ItemExponentialFailure, Priority, PriorityQueue,
    default_controller_rate_limiter,
};

use crate::support::still_pending;

const MS: Duration = Duration::from_millis(1);

fn queue<T: Eq + std::hash::Hash + Clone + Send + Sync + 'static>() -> PriorityQueue<T> {
    PriorityQueue::new(ItemExponentialFailure::new(5 * MS, 1000 * MS))
}

fn priority(value: i32) -> Priority {
    match Priority::new(value) {
        Ok(priority) => priority,
        Err(error) => panic!("{error}"),
    }
}

fn with(value: i32) -> AddOptions {
    AddOptions::new().priority(priority(value))
}

#[tokio::test(start_paused = true)]
async fn hands_out_the_highest_priority_first_and_fifo_within_one() {
    let queue = queue();
    queue.add_with("low-1", AddOptions::new().priority(Priority::LOW));
    queue.add("normal-1");
    queue.add_with("low-2", AddOptions::new().priority(Priority::LOW));
    queue.add_with("high", with(10));
    queue.add("normal-2");
    assert_eq!(queue.len(), 5);
    let mut got = Vec::new();
    while let Ok(Some(taken)) = tokio::time::timeout(MS, queue.get_with_priority()).await {
        got.push((taken.0, taken.1.get()));
    }
    assert_eq!(
        got,
        [
            ("high", 10),
            ("normal-1", 0),
            ("normal-2", 0),
            ("low-1", -100),
            ("low-2", -100),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn readd_keeps_the_higher_priority_and_never_lowers_it() {
    let queue = queue();
    queue.add_with("a", with(1));
    queue.add_with("a", with(2));
    queue.add_with("b", with(2));
    queue.add_with("b", with(1));
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.get_with_priority().await, Some(("a", priority(2))));
    assert_eq!(queue.get_with_priority().await, Some(("b", priority(2))));
}

#[tokio::test(start_paused = true)]
async fn raised_item_goes_to_the_back_of_its_new_priority() {
    let queue = queue();
    queue.add("foo");
    queue.add_with("bar", with(1));
    queue.add_with("foo", with(1));
    queue.add("baz");
    for expected in ["bar", "foo", "baz"] {
        assert_eq!(queue.get().await, Some(expected));
    }
}

#[tokio::test(start_paused = true)]
async fn item_in_flight_is_not_handed_out_again_until_done() {
    let queue = queue();
    queue.add_with("a", AddOptions::new().priority(Priority::LOW));
    assert_eq!(queue.get_with_priority().await, Some(("a", Priority::LOW)));
    // Re-added while processing, twice: queued again at `done` with the higher priority.
    queue.add_with("a", AddOptions::new().priority(Priority::LOW));
    queue.add_with("a", with(3));
    queue.add("b");
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get().await, Some("b"));
    assert!(still_pending(queue.get()).await);
    queue.add("c");
    queue.done(&"a");
    assert_eq!(queue.get_with_priority().await, Some(("a", priority(3))));
    assert_eq!(queue.get().await, Some("c"));
    // Done without a re-add: gone.
    queue.done(&"a");
    queue.done(&"b");
    queue.done(&"c");
    assert!(queue.is_empty());
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn ready_add_of_a_waiting_item_makes_it_ready_now_with_the_higher_priority() {
    let queue = queue();
    queue.add_with("a", with(5).after(100 * MS));
    assert!(queue.is_waiting(&"a"));
    assert_eq!(queue.len(), 0);
    queue.add_with("a", AddOptions::new().priority(Priority::LOW));
    assert!(!queue.is_waiting(&"a"));
    assert_eq!(queue.num_waiting(), 0);
    let start = Instant::now();
    assert_eq!(queue.get_with_priority().await, Some(("a", priority(5))));
    assert_eq!(start.elapsed(), Duration::ZERO);
    queue.done(&"a");
    // Never delivered a second time by its old ready time.
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn delayed_add_of_a_ready_item_leaves_it_ready() {
    let queue = queue();
    queue.add("a");
    queue.add_with("a", with(4).after(Duration::from_secs(3600)));
    assert!(!queue.is_waiting(&"a"));
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.get_with_priority().await, Some(("a", priority(4))));
    queue.done(&"a");
    assert!(still_pending(queue.get()).await);
}

#[tokio::test(start_paused = true)]
async fn waiting_item_keeps_the_earlier_ready_time_and_the_higher_priority() {
    let queue = queue();
    let start = Instant::now();
    queue.add_with("a", with(1).after(10 * MS));
    queue.add_with("a", AddOptions::new().after(50 * MS));
    queue.add_with("a", with(2).after(30 * MS));
    assert_eq!(queue.num_waiting(), 1);
    assert_eq!(queue.get_with_priority().await, Some(("a", priority(2))));
    assert_eq!(start.elapsed(), 10 * MS);
}

#[tokio::test(start_paused = true)]
async fn waiting_items_become_ready_in_ready_time_order_behind_their_priority() {
    let queue = queue();
    queue.add_with("late", AddOptions::new().after(20 * MS));
    queue.add_with("early", AddOptions::new().after(10 * MS));
    queue.add_with(
        "early-low",
        AddOptions::new().priority(Priority::LOW).after(5 * MS),
    );
    queue.add("now");
    tokio::time::sleep(30 * MS).await;
    // Ready in order early-low (5 ms), early (10 ms), late (20 ms); "now" was ready first.
    for expected in ["now", "early", "late", "early-low"] {
        assert_eq!(queue.get().await, Some(expected));
    }
}

#[tokio::test(start_paused = true)]
async fn sleeping_worker_is_woken_by_an_add_and_by_a_due_item() {
    let queue = queue();
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.get().await }
    });
    tokio::task::yield_now().await;
    queue.add_with(1, with(3));
    assert_eq!(worker.await.ok(), Some(Some(1)));

    let start = Instant::now();
    let worker = tokio::spawn({
        let queue = queue.clone();
        async move { queue.get().await }
    });
    tokio::task::yield_now().await;
    queue.add_after(2, 7 * MS);
    assert_eq!(worker.await.ok(), Some(Some(2)));
    assert_eq!(start.elapsed(), 7 * MS);
}

#[tokio::test(start_paused = true)]
async fn rate_limited_retries_back_off_and_keep_their_priority() {
    let queue = queue();
    let mut last = Instant::now();
    queue.add_with("a", AddOptions::new().priority(Priority::LOW));
    for (failures, waited) in [(1, 0), (2, 5), (3, 10)] {
        assert_eq!(queue.get_with_priority().await, Some(("a", Priority::LOW)));
        assert_eq!(last.elapsed(), waited * MS);
        last = Instant::now();
        // The reconcile failed: retry with the priority the item had.
        queue.add_with(
            "a",
            AddOptions::new().priority(Priority::LOW).rate_limited(),
        );
        assert_eq!(queue.num_requeues(&"a"), failures);
        assert!(queue.is_waiting(&"a"));
        queue.done(&"a");
    }
    assert_eq!(queue.get_with_priority().await, Some(("a", Priority::LOW)));
    assert_eq!(last.elapsed(), 20 * MS);
    queue.forget(&"a");
    assert_eq!(queue.num_requeues(&"a"), 0);
}

#[tokio::test(start_paused = true)]
async fn rate_limited_add_of_a_ready_or_waiting_item_counts_no_failure() {
    let queue = queue();
    queue.add("ready");
    queue.add_rate_limited("ready");
    queue.add_with("ready", with(2).rate_limited());
    assert_eq!(queue.num_requeues(&"ready"), 0);
    assert!(!queue.is_waiting(&"ready"));

    queue.add_rate_limited("waiting");
    queue.add_rate_limited("waiting");
    queue.add_with("waiting", with(6).rate_limited());
    assert_eq!(queue.num_requeues(&"waiting"), 1);
    assert_eq!(queue.num_waiting(), 1);

    assert_eq!(
        queue.get_with_priority().await,
        Some(("ready", priority(2)))
    );
    let start = Instant::now();
    assert_eq!(
        queue.get_with_priority().await,
        Some(("waiting", priority(6)))
    );
    assert_eq!(start.elapsed(), 5 * MS);
}

#[tokio::test(start_paused = true)]
async fn a_non_zero_after_caps_the_limiters_delay() {
    let queue = queue();
    for _ in 0..4 {
        queue.add_rate_limited("a");
        queue.get().await;
        queue.done(&"a");
    }
    // The fifth failure would wait 80 ms; `after` caps it at 3 ms.
    let start = Instant::now();
    queue.add_with("a", AddOptions::new().after(3 * MS).rate_limited());
    assert_eq!(queue.num_requeues(&"a"), 5);
    assert_eq!(queue.get().await, Some("a"));
    assert_eq!(start.elapsed(), 3 * MS);
}

#[tokio::test(start_paused = true)]
async fn shut_down_discards_waiting_items_and_hands_out_what_is_ready() {
    let queue = queue();
    queue.add_with("ready", with(1));
    queue.add_after("waiting", 10 * MS);
    queue.shut_down();
    assert!(queue.is_shutting_down());
    assert_eq!(queue.num_waiting(), 0);
    queue.add("late");
    queue.add_after("late", MS);
    queue.add_rate_limited("late");
    assert_eq!(queue.num_requeues(&"late"), 0);
    assert_eq!(queue.get().await, Some("ready"));
    assert_eq!(queue.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn drain_waits_for_ready_and_in_flight_items() {
    let queue = queue();
    queue.add("a");
    queue.add_with("b", with(1));
    queue.add_after("c", 10 * MS);
    let first = queue.get().await;
    assert_eq!(first, Some("b"));
    let drain = tokio::spawn({
        let queue = queue.clone();
        async move { queue.shut_down_with_drain().await }
    });
    tokio::task::yield_now().await;
    assert!(!drain.is_finished());
    assert_eq!(queue.get().await, Some("a"));
    queue.done(&"b");
    tokio::task::yield_now().await;
    assert!(!drain.is_finished());
    queue.done(&"a");
    assert!(drain.await.is_ok());
    assert_eq!(queue.get().await, None);
}

#[test]
fn built_outside_a_runtime_delivers_once_used_from_one() {
    let queue = queue();
    queue.add_with("a", with(1).after(10 * MS));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build();
    let Ok(runtime) = runtime else {
        panic!("no runtime");
    };
    assert_eq!(
        runtime.block_on(queue.get_with_priority()),
        Some(("a", priority(1)))
    );
}

#[tokio::test(start_paused = true)]
async fn timer_task_ends_when_the_queue_is_dropped_or_shut_down() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let baseline = metrics.num_alive_tasks();

    let queue = PriorityQueue::new(default_controller_rate_limiter());
    queue.add_after(1, Duration::from_secs(3600));
    tokio::task::yield_now().await;
    assert_eq!(metrics.num_alive_tasks(), baseline + 1);
    drop(queue);
    tokio::time::sleep(MS).await;
    assert_eq!(metrics.num_alive_tasks(), baseline);

    for drain in [false, true] {
        let queue = PriorityQueue::new(default_controller_rate_limiter());
        queue.add_after(1, Duration::from_secs(3600));
        tokio::task::yield_now().await;
        assert_eq!(metrics.num_alive_tasks(), baseline + 1);
        if drain {
            queue.shut_down_with_drain().await;
        } else {
            queue.shut_down();
        }
        tokio::time::sleep(MS).await;
        assert_eq!(metrics.num_alive_tasks(), baseline);
    }
}

#[tokio::test(start_paused = true)]
async fn many_priorities_keep_their_order() {
    // More priorities than the queue keeps idle FIFOs for; the second round uses new ones,
    // so the idle FIFOs of the first are dropped on the way.
    let queue = queue();
    let scrambled: Vec<i32> = (-12..12)
        .rev()
        .filter(|value| value % 2 == 0)
        .chain((-12..12).filter(|value| value % 2 != 0))
        .collect();
    for round in 0..2 {
        for &value in &scrambled {
            queue.add_with(value, with(value + 50 * round));
        }
        let mut got = Vec::new();
        while let Ok(Some(item)) = tokio::time::timeout(MS, queue.get()).await {
            got.push(item);
            queue.done(&item);
        }
        let expected: Vec<i32> = (-12..12).rev().collect();
        assert_eq!(got, expected);
    }
}

#[test]
fn priorities_outside_the_range_are_refused_with_a_clear_error() {
    assert_eq!(Priority::new(-1000).map(Priority::get), Ok(-1000));
    assert_eq!(Priority::try_from(1000).map(i32::from), Ok(1000));
    let Err(error) = Priority::new(1001) else {
        panic!("1001 accepted");
    };
    assert_eq!(error, Error::PriorityOutOfRange { value: 1001 });
    assert!(error.to_string().contains("from -1000 to 1000"), "{error}");
    assert!(Priority::new(i32::MIN).is_err());
    assert_eq!(Priority::default(), Priority::NORMAL);
    assert!(Priority::MIN < Priority::LOW && Priority::LOW < Priority::NORMAL);
    assert_eq!(Priority::LOW.to_string(), "-100");
}

#[test]
fn handles_are_cheap_shareable_values() {
    fn shareable<Q: Clone + Send + Sync + std::fmt::Debug + 'static>() {}
    shareable::<PriorityQueue<String>>();
}

#[tokio::test(start_paused = true)]
async fn futures_of_every_queue_can_be_spawned_with_borrowed_items() {
    use workqueue::{DelayingQueue, Queue, RateLimitingQueue};

    let plain: Queue<&'static str> = Queue::new();
    let delaying: DelayingQueue<&'static str> = DelayingQueue::new();
    let limiting = RateLimitingQueue::new(default_controller_rate_limiter::<&'static str>());
    let prioritized = PriorityQueue::new(default_controller_rate_limiter::<&'static str>());
    let tasks = [
        tokio::spawn({
            let queue = plain.clone();
            async move { queue.get().await.is_none() }
        }),
        tokio::spawn({
            let queue = delaying.clone();
            async move { queue.get().await.is_none() }
        }),
        tokio::spawn({
            let queue = limiting.clone();
            async move { queue.get().await.is_none() }
        }),
        tokio::spawn({
            let queue = prioritized.clone();
            async move { queue.get().await.is_none() }
        }),
        tokio::spawn({
            let queue = prioritized.clone();
            async move { queue.get_with_priority().await.is_none() }
        }),
        tokio::spawn({
            let queue = plain.clone();
            async move {
                queue.shut_down_with_drain().await;
                true
            }
        }),
        tokio::spawn({
            let queue = delaying.clone();
            async move {
                queue.shut_down_with_drain().await;
                true
            }
        }),
        tokio::spawn({
            let queue = limiting.clone();
            async move {
                queue.shut_down_with_drain().await;
                true
            }
        }),
        tokio::spawn({
            let queue = prioritized.clone();
            async move {
                queue.shut_down_with_drain().await;
                true
            }
        }),
    ];
    for task in tasks {
        assert_eq!(task.await.ok(), Some(true));
    }
}
