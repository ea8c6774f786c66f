//! A rate-limited work queue drained by three workers, with no Kubernetes: five jobs, some
//! failing a few times first, retried with per-item exponential backoff until all succeed —
//! the workqueue crate alone.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::task::JoinSet;
use workqueue::{ItemExponentialFailure, MaxOf, RateLimitingQueue, TokenBucket};

/// A unit of work: it fails `failures` times before it succeeds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// The job's name, its key in the queue.
    pub name: String,
    /// How many attempts fail before one succeeds.
    pub failures: u32,
}

impl Job {
    /// A job `name` that fails `failures` times first.
    pub fn new(name: &str, failures: u32) -> Self {
        Self {
            name: name.to_owned(),
            failures,
        }
    }
}

/// What happened to one job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Attempts made, the successful one included.
    pub attempts: u32,
    /// Which worker finished it (`None` while it is still failing).
    pub finished_by: Option<usize>,
}

/// The queue's limiter: per item 10 ms doubling up to 1 s, and overall at most 100 retries a
/// second (burst 20), whichever is slower.
pub fn rate_limiter() -> Result<MaxOf<String>, workqueue::Error> {
    Ok(MaxOf::new(vec![
        Box::new(ItemExponentialFailure::new(
            Duration::from_millis(10),
            Duration::from_secs(1),
        )),
        Box::new(TokenBucket::new(100.0, 20)?),
    ]))
}

/// Shared bookkeeping of a run.
struct Progress {
    jobs: BTreeMap<String, Job>,
    outcomes: BTreeMap<String, Outcome>,
}

/// Queues every job and processes them with `workers` workers until each has succeeded, retrying
/// failures with the rate limiter's backoff. Returns each job's outcome, by name.
pub async fn run(
    jobs: Vec<Job>,
    workers: usize,
) -> Result<BTreeMap<String, Outcome>, workqueue::Error> {
    let queue = RateLimitingQueue::new(rate_limiter()?);
    let progress = Arc::new(Mutex::new(Progress {
        jobs: jobs
            .iter()
            .map(|job| (job.name.clone(), job.clone()))
            .collect(),
        outcomes: BTreeMap::new(),
    }));
    if jobs.is_empty() {
        return Ok(BTreeMap::new());
    }
    for job in &jobs {
        queue.add(job.name.clone());
    }
    let mut pool = JoinSet::new();
    for worker in 0..workers.max(1) {
        let (queue, progress) = (queue.clone(), Arc::clone(&progress));
        pool.spawn(async move {
            while let Some(name) = queue.get().await {
                process(worker, &name, &queue, &progress);
                queue.done(&name);
            }
        });
    }
    while pool.join_next().await.is_some() {}
    let outcomes = std::mem::take(&mut progress.lock().outcomes);
    Ok(outcomes)
}

/// One attempt at job `name`: a failure goes back to the queue rate-limited; a success forgets
/// the job's backoff, and the last success shuts the queue down.
fn process(
    worker: usize,
    name: &str,
    queue: &RateLimitingQueue<String>,
    progress: &Mutex<Progress>,
) {
    let mut progress = progress.lock();
    let failures = progress.jobs.get(name).map_or(0, |job| job.failures);
    let outcome = progress.outcomes.entry(name.to_owned()).or_default();
    outcome.attempts += 1;
    if outcome.attempts <= failures {
        let retries = queue.num_requeues(&name.to_owned());
        tracing::info!(
            worker,
            job = name,
            attempt = outcome.attempts,
            retries,
            "failed; retrying after backoff"
        );
        queue.add_rate_limited(name.to_owned());
        return;
    }
    outcome.finished_by = Some(worker);
    tracing::info!(worker, job = name, attempt = outcome.attempts, "done");
    queue.forget(&name.to_owned());
    let finished = progress
        .outcomes
        .values()
        .filter(|o| o.finished_by.is_some())
        .count();
    if finished == progress.jobs.len() {
        queue.shut_down();
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    examples::logging::init();
    let jobs = vec![
        Job::new("resize-images", 0),
        Job::new("send-newsletter", 2),
        Job::new("rebuild-index", 1),
        Job::new("sync-billing", 4),
        Job::new("rotate-logs", 0),
    ];
    match run(jobs, 3).await {
        Ok(outcomes) => {
            for (name, outcome) in outcomes {
                let worker = outcome
                    .finished_by
                    .map_or_else(|| "nobody".to_owned(), |w| format!("worker {w}"));
                println!(
                    "{name}: {} attempt(s), finished by {worker}",
                    outcome.attempts
                );
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            tracing::error!(%error, "invalid queue settings");
            ExitCode::FAILURE
        }
    }
}
