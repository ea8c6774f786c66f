//! Cache readers beside the informer's writes, as a controller's workers read its cache: tasks
//! that list the whole cache in a loop while the watch events arrive. Every list takes the
//! cache's read lock, so each write the informer makes waits for the lists under way: the
//! contention client-go's batch pops were built for (kubernetes/kubernetes#132240 measured the
//! informer's writes and its readers' lists together).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Result, ensure};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Lists the whole cache and returns how many objects it held.
pub type ListCache = Arc<dyn Fn() -> usize + Send + Sync>;

/// Reader tasks listing a cache until stopped.
pub struct Readers {
    stop: CancellationToken,
    lists: Arc<AtomicU64>,
    /// The fewest objects any list returned.
    fewest: Arc<AtomicU64>,
    tasks: Vec<JoinHandle<()>>,
}

impl Readers {
    /// Starts `count` tasks, each calling `list` in a loop (yielding to the runtime between
    /// lists, as a worker awaits between reconciles).
    pub fn start(count: usize, list: ListCache) -> Self {
        let stop = CancellationToken::new();
        let lists = Arc::new(AtomicU64::new(0));
        let fewest = Arc::new(AtomicU64::new(u64::MAX));
        let tasks = (0..count)
            .map(|_| {
                let (stop, lists, fewest, list) = (
                    stop.clone(),
                    Arc::clone(&lists),
                    Arc::clone(&fewest),
                    Arc::clone(&list),
                );
                tokio::spawn(async move {
                    while !stop.is_cancelled() {
                        let objects = list() as u64;
                        fewest.fetch_min(objects, Ordering::Relaxed);
                        lists.fetch_add(1, Ordering::Relaxed);
                        tokio::task::yield_now().await;
                    }
                })
            })
            .collect();
        Self {
            stop,
            lists,
            fewest,
            tasks,
        }
    }

    /// Stops the readers and returns the lists they made, failing unless every reader listed
    /// at least once and every list held at least `objects` objects (a reader that read an
    /// empty or partial cache did less work than the figure claims).
    pub async fn stop(self, objects: usize) -> Result<u64> {
        self.stop.cancel();
        let readers = self.tasks.len() as u64;
        for task in self.tasks {
            task.await?;
        }
        let lists = self.lists.load(Ordering::Relaxed);
        let fewest = self.fewest.load(Ordering::Relaxed);
        ensure!(
            lists >= readers,
            "the readers listed {lists} times, fewer than one list each"
        );
        ensure!(
            fewest >= objects as u64,
            "a reader listed {fewest} objects, fewer than the {objects} cached"
        );
        Ok(lists)
    }
}
