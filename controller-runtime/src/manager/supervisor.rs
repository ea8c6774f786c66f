//! Supervising the runnables of a started manager: sync the caches, run the runnables — those
//! that need leadership only while leading — until a shutdown request, a failure or lost
//! leadership, then drain them within the graceful shutdown timeout.

use std::sync::atomic::Ordering;

use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::manager::error::Error;
use crate::manager::running::Manager;
use crate::ops::leader_election::elector::LeaderElector;
use crate::ops::runnable::Runnable;

impl Manager {
    /// Syncs the caches and runs the runnables (leader-only ones while leading) until a
    /// shutdown request, a failure or lost leadership; then stops them.
    pub(super) async fn run_runnables(
        &self,
        elector: Option<&LeaderElector>,
        leader_runnables: Vec<Box<dyn Runnable>>,
        runnables: Vec<Box<dyn Runnable>>,
        mut late: mpsc::UnboundedReceiver<Box<dyn Runnable>>,
        lost: &CancellationToken,
    ) -> Result<(), Error> {
        let graceful = self.shutdown.graceful();
        let stop = CancellationToken::new();
        // Whatever warmed up stops with this call, however it returns.
        let _stop_on_return = stop.clone().drop_guard();
        let manager_warm = elector.is_none() || self.warm_up;
        // Runnables that warm up start what they can now, leader or not (controllers: their
        // informers, sources and queues); only their `run` waits for leadership.
        let (mut warmed, mut leader_runnables): (Vec<_>, Vec<_>) = leader_runnables
            .into_iter()
            .partition(|runnable| elector.is_some() && runnable.warms_up());
        for runnable in &warmed {
            runnable.warm_up(&stop.child_token());
        }
        if !manager_warm && let Some(elector) = elector {
            tracing::info!(identity = %elector.identity(), warm = warmed.len(), "waiting for leadership before starting the other informers");
            if !elector.wait_leading(graceful).await {
                return Ok(());
            }
        }
        let factory = &self.registry.factory;
        self.registry.set_running();
        factory.start();
        let mut leader_tasks = JoinSet::new();
        if !manager_warm && elector.is_some_and(LeaderElector::is_leader) {
            // Leading now: warm controllers work at once from their synced caches, while the
            // informers that waited for leadership sync.
            spawn_all(&mut leader_tasks, std::mem::take(&mut warmed), &stop);
        }
        leader_runnables.append(&mut warmed);
        tracing::info!(informers = factory.len(), "waiting for caches to sync");
        tokio::select! {
            synced = factory.wait_for_cache_sync(self.cache_sync_timeout) => {
                if let Err(error) = synced {
                    return Err(Error::CacheSync(error));
                }
            }
            () = graceful.cancelled() => return Ok(()),
            () = lost.cancelled() => return Err(Error::LeadershipLost),
        }
        self.synced.store(true, Ordering::SeqCst);
        tracing::info!(
            runnables = runnables.len(),
            "caches synced; starting runnables"
        );

        let mut tasks = JoinSet::new();
        spawn_all(&mut tasks, runnables, &stop);
        let mut pending_leader = Some(leader_runnables);
        if let Some(elector) = elector {
            if manager_warm && !elector.is_leader() {
                tracing::info!(identity = %elector.identity(), "caches warm; waiting for leadership");
            }
        } else if let Some(runnables) = pending_leader.take() {
            spawn_all(&mut leader_tasks, runnables, &stop);
        }
        let leading = async {
            match elector {
                Some(elector) => elector.wait_leading(graceful).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(leading);
        let mut failure = None;
        let mut lost_leadership = false;
        loop {
            tokio::select! {
                () = graceful.cancelled() => break,
                () = lost.cancelled() => {
                    lost_leadership = true;
                    break;
                }
                leads = &mut leading, if pending_leader.is_some() => {
                    if leads && let Some(runnables) = pending_leader.take() {
                        tracing::info!(runnables = runnables.len(), "leading; starting leader runnables");
                        spawn_all(&mut leader_tasks, runnables, &stop);
                    } else {
                        pending_leader = None;
                    }
                }
                Some(runnable) = late.recv() => {
                    tracing::info!(runnable = runnable.name(), "starting a runnable added to the running manager");
                    if elector.is_none() || !runnable.need_leader_election() {
                        spawn_all(&mut tasks, vec![runnable], &stop);
                    } else if let Some(pending) = pending_leader.as_mut() {
                        if runnable.warms_up() {
                            runnable.warm_up(&stop.child_token());
                        }
                        pending.push(runnable);
                    } else if elector.is_some_and(LeaderElector::is_leader) {
                        spawn_all(&mut leader_tasks, vec![runnable], &stop);
                    }
                }
                Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                    if let Some(error) = runnable_error(joined) {
                        tracing::error!(%error, "runnable failed; shutting down");
                        failure = Some(error);
                        break;
                    }
                }
                Some(joined) = leader_tasks.join_next(), if !leader_tasks.is_empty() => {
                    if let Some(error) = runnable_error(joined) {
                        tracing::error!(%error, "runnable failed; shutting down");
                        failure = Some(error);
                        break;
                    }
                }
            }
        }
        if lost_leadership {
            // Never act after losing the lease: no drain for leader runnables.
            leader_tasks.abort_all();
            tracing::error!("leadership lost; leader runnables aborted");
        }
        stop.cancel();
        let drain = async {
            loop {
                tokio::select! {
                    () = lost.cancelled(), if !leader_tasks.is_empty() => {
                        leader_tasks.abort_all();
                        lost_leadership = true;
                        while leader_tasks.join_next().await.is_some() {}
                    }
                    Some(joined) = leader_tasks.join_next(), if !leader_tasks.is_empty() => {
                        if let Some(error) = runnable_error(joined) {
                            tracing::error!(%error, "runnable failed while shutting down");
                        }
                    }
                    Some(joined) = tasks.join_next(), if !tasks.is_empty() => {
                        if let Some(error) = runnable_error(joined) {
                            tracing::error!(%error, "runnable failed while shutting down");
                        }
                    }
                    else => break,
                }
            }
        };
        let outcome = tokio::select! {
            () = drain => Ok(()),
            () = tokio::time::sleep(self.graceful_shutdown_timeout) => {
                Err(Error::ShutdownTimeout(self.graceful_shutdown_timeout))
            }
            () = self.shutdown.forced().cancelled() => Err(Error::ForcedShutdown),
        };
        leader_tasks.abort_all();
        tasks.abort_all();
        if lost_leadership {
            return Err(Error::LeadershipLost);
        }
        match failure {
            Some(error) => Err(error),
            None => outcome,
        }
    }
}

/// Spawns every runnable into `tasks`, each with a child token of `stop`.
fn spawn_all(
    tasks: &mut JoinSet<RunnableExit>,
    runnables: Vec<Box<dyn Runnable>>,
    stop: &CancellationToken,
) {
    for runnable in runnables {
        let token = stop.child_token();
        tasks.spawn(async move {
            let name = runnable.name().to_owned();
            let result = runnable.run(token).await;
            (name, result)
        });
    }
}

/// What a runnable task returns: its name and its result.
type RunnableExit = (String, Result<(), Box<dyn std::error::Error + Send + Sync>>);

/// The error of a finished runnable task, if it failed or panicked.
fn runnable_error(joined: Result<RunnableExit, tokio::task::JoinError>) -> Option<Error> {
    match joined {
        Ok((_, Ok(()))) => None,
        Ok((name, Err(error))) => Some(Error::Runnable {
            name,
            message: error.to_string(),
        }),
        Err(error) => Some(Error::Runnable {
            name: "unknown".to_owned(),
            message: error.to_string(),
        }),
    }
}
