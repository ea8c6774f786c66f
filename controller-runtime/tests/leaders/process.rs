//! Member processes: a slot starts a copy of this binary as a member, kills it with SIGKILL,
//! notices when it exits on its own, and starts the next incarnation; and reading back what
//! the incarnations left (reconcile logs, cache snapshots).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use apiserver_sim::ApiServer;
use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt;

use crate::journal::{self, Interval, now_us};
use crate::member::{LEASE, MemberEnv, Snapshot};

/// One incarnation's reconcile log and when it ended (None: still running).
struct Past {
    log: PathBuf,
    ended_us: Option<i64>,
}

/// A member slot: one process at a time, replaced by a new incarnation when it dies.
pub struct Slot {
    name: String,
    dir: PathBuf,
    kubeconfig: PathBuf,
    incarnation: u32,
    child: Option<Child>,
    logs: Vec<Past>,
}

impl Slot {
    pub fn new(name: String, dir: &Path, kubeconfig: &Path) -> Self {
        Self {
            name,
            dir: dir.to_owned(),
            kubeconfig: kubeconfig.to_owned(),
            incarnation: 0,
            child: None,
            logs: Vec::new(),
        }
    }

    /// The current (or last) incarnation's identity.
    pub fn identity(&self) -> String {
        format!("{}-{}", self.name, self.incarnation)
    }

    pub fn incarnations(&self) -> u32 {
        self.incarnation
    }

    fn snapshot_path(&self) -> PathBuf {
        self.dir.join(format!("{}.snapshot.json", self.identity()))
    }

    /// Starts the next incarnation.
    pub fn start(&mut self) -> Result<(), String> {
        self.incarnation += 1;
        let env = MemberEnv {
            identity: self.identity(),
            kubeconfig: self.kubeconfig.clone(),
            log: self.dir.join(format!("{}.log", self.identity())),
            snapshot: self.snapshot_path(),
        };
        let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
        let child = Command::new(exe)
            .envs(env.vars())
            .env("RUST_LOG", "off")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .map_err(|e| format!("starting {}: {e}", env.identity))?;
        self.logs.push(Past {
            log: env.log,
            ended_us: None,
        });
        self.child = Some(child);
        Ok(())
    }

    /// Kills the running incarnation with SIGKILL (if any); its identity.
    pub fn kill(&mut self) -> Result<String, String> {
        if let Some(mut child) = self.child.take() {
            let killed_us = now_us();
            child
                .kill()
                .map_err(|e| format!("killing {}: {e}", self.identity()))?;
            let _ = child.wait();
            if let Some(past) = self.logs.last_mut() {
                past.ended_us = Some(killed_us);
            }
        }
        Ok(self.identity())
    }

    /// The exit code of an incarnation that ended on its own since the last call.
    pub fn exited(&mut self) -> Result<Option<i32>, String> {
        let Some(child) = self.child.as_mut() else {
            return Ok(None);
        };
        match child.try_wait() {
            Ok(Some(status)) => {
                self.child = None;
                if let Some(past) = self.logs.last_mut() {
                    past.ended_us = Some(now_us());
                }
                Ok(Some(status.code().unwrap_or(-1)))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(format!("waiting for {}: {e}", self.identity())),
        }
    }

    /// The running incarnation's last cache snapshot.
    pub fn snapshot(&self) -> Option<Snapshot> {
        self.child.as_ref()?;
        let text = std::fs::read(self.snapshot_path()).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let _ = self.kill();
    }
}

/// Every reconcile of every incarnation so far; one still running is read as it stands.
pub fn all_intervals(slots: &[Slot]) -> Result<Vec<Interval>, String> {
    let mut all = Vec::new();
    for slot in slots {
        for past in &slot.logs {
            if past.log.exists() {
                all.extend(journal::read(&past.log, past.ended_us.unwrap_or(i64::MAX))?);
            }
        }
    }
    Ok(all)
}

/// The Lease holder on the server, if any.
pub fn lease_holder(server: &ApiServer) -> Option<String> {
    server
        .list::<Lease>()
        .into_iter()
        .find(|l| l.name_any() == LEASE)
        .and_then(|l| l.spec?.holder_identity)
        .filter(|h| !h.is_empty())
}
