//! A rate-limited work queue with three workers and no Kubernetes: five jobs, some failing a
//! few times first, retried with per-item exponential backoff until all succeed.

use std::process::ExitCode;

use examples::workqueue_only::{Job, run};

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
