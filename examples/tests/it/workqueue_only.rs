//! `workqueue-only`: every job succeeds after exactly its failures plus one attempt, retries
//! wait for their backoff, and the workers stop on their own.

use std::time::Duration;

#[path = "../../examples/workqueue-only.rs"]
#[allow(dead_code)]
mod example;

use example::{Job, run};

#[tokio::test(start_paused = true)]
async fn retries_until_every_job_succeeds() {
    let jobs = vec![Job::new("a", 0), Job::new("b", 3), Job::new("c", 1)];
    let started = tokio::time::Instant::now();
    let outcomes = tokio::time::timeout(Duration::from_secs(60), run(jobs, 2))
        .await
        .unwrap()
        .unwrap();
    let attempts: Vec<(&str, u32)> = outcomes
        .iter()
        .map(|(name, outcome)| (name.as_str(), outcome.attempts))
        .collect();
    assert_eq!(attempts, [("a", 1), ("b", 4), ("c", 2)]);
    assert!(
        outcomes
            .values()
            .all(|o| o.finished_by.is_some_and(|w| w < 2))
    );
    // b's three retries waited 10 + 20 + 40 ms of (virtual) backoff.
    assert!(started.elapsed() >= Duration::from_millis(70));
}

#[tokio::test]
async fn no_jobs_no_work() {
    assert!(run(Vec::new(), 4).await.unwrap().is_empty());
}
