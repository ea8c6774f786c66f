//! The shard processes of one configuration: copies of this binary started as `pipeline-bench
//! shard`, read through their status files and `/proc`, and killed when the configuration ends
//! (or this process does: a shard exits when its stdin closes).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use tokio::time::Instant;

use crate::shards::status::ShardStatus;

/// How often the statuses are read while waiting.
const POLL_EVERY: Duration = Duration::from_millis(20);

/// One running shard process.
pub struct ShardProcess {
    name: String,
    child: Child,
    status: PathBuf,
    stderr: PathBuf,
}

/// What each shard process reconciles with.
#[derive(Debug, Clone, Copy)]
pub struct ShardSettings {
    /// `max_concurrent_reconciles`.
    pub workers: usize,
    /// Milliseconds each reconcile waits.
    pub reconcile_ms: u64,
}

impl ShardProcess {
    /// Starts shard `name` against the server at `url`; its files go to `dir`.
    pub fn spawn(dir: &Path, url: &str, name: &str, settings: ShardSettings) -> Result<Self> {
        let status = dir.join(format!("{name}.status.json"));
        let stderr = dir.join(format!("{name}.stderr"));
        let child = Command::new(std::env::current_exe()?)
            .args(["shard", "--server", url, "--name", name, "--status"])
            .arg(&status)
            .args(["--workers", &settings.workers.to_string()])
            .args(["--reconcile-ms", &settings.reconcile_ms.to_string()])
            .env("RUST_LOG", "off")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr)?)
            .spawn()
            .with_context(|| format!("starting shard process {name}"))?;
        Ok(Self {
            name: name.to_owned(),
            child,
            status,
            stderr,
        })
    }

    /// The shard's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The process id, for `/proc`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Fails if the process has exited, with the end of what it wrote to stderr.
    fn check_running(&mut self) -> Result<()> {
        if let Some(status) = self.child.try_wait()? {
            let stderr = std::fs::read_to_string(&self.stderr).unwrap_or_default();
            let tail: Vec<&str> = stderr.lines().rev().take(10).collect();
            bail!(
                "shard process {} exited ({status}): {}",
                self.name,
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        Ok(())
    }
}

impl Drop for ShardProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads every process's status until `done` returns a value or `limit` passes; fails if a
/// process exits meanwhile. `what` names the wait in the timeout's error, with the last
/// statuses' summary.
pub async fn wait_for<T>(
    processes: &mut [ShardProcess],
    limit: Duration,
    what: &str,
    mut done: impl FnMut(&[ShardStatus]) -> Result<Option<T>>,
) -> Result<T> {
    let deadline = Instant::now() + limit;
    loop {
        let mut statuses = Vec::with_capacity(processes.len());
        for process in processes.iter_mut() {
            process.check_running()?;
            if let Some(status) = ShardStatus::read(&process.status)? {
                statuses.push(status);
            }
        }
        if statuses.len() == processes.len()
            && let Some(value) = done(&statuses)?
        {
            return Ok(value);
        }
        if Instant::now() > deadline {
            let summary: Vec<String> = statuses
                .iter()
                .map(|status| {
                    format!(
                        "{}: ready {}, {} cached, {} in flight",
                        status.shard, status.ready, status.cache_objects, status.in_flight
                    )
                })
                .collect();
            bail!(
                "timed out after {limit:?} waiting for {what} ({})",
                summary.join("; ")
            );
        }
        tokio::time::sleep(POLL_EVERY).await;
    }
}
