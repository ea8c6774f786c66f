//! Member processes: a slot starts a copy of this binary as a member, kills it with SIGKILL or
//! stops it with SIGTERM, notices when it exits on its own, and starts the next incarnation;
//! and reading back what the incarnations left (reconcile logs, snapshots).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde::de::DeserializeOwned;

use super::MemberEnv;
use super::journal::{self, Interval, now_us};

/// One incarnation's reconcile log and when it ended (None: still running).
struct Past {
    log: PathBuf,
    ended_us: Option<i64>,
}

/// A member slot: one process at a time, replaced by a new incarnation when it dies.
pub struct Slot {
    prefix: &'static str,
    name: String,
    dir: PathBuf,
    kubeconfig: PathBuf,
    extra: Vec<(String, OsString)>,
    /// Each incarnation's stderr goes to `<identity>.stderr` in `dir` (else it is inherited).
    stderr_files: bool,
    incarnation: u32,
    child: Option<Child>,
    logs: Vec<Past>,
}

impl Slot {
    /// A slot named `name` of a soak whose variables start with `prefix`; its files go to
    /// `dir`.
    pub fn new(prefix: &'static str, name: String, dir: &Path, kubeconfig: &Path) -> Self {
        Self {
            prefix,
            name,
            dir: dir.to_owned(),
            kubeconfig: kubeconfig.to_owned(),
            extra: Vec::new(),
            stderr_files: false,
            incarnation: 0,
            child: None,
            logs: Vec::new(),
        }
    }

    /// Every incarnation is also started with `name=value` in its environment.
    pub fn with_env(mut self, name: impl Into<String>, value: impl Into<OsString>) -> Self {
        self.extra.push((name.into(), value.into()));
        self
    }

    /// Every incarnation writes its stderr to a file of its own (see
    /// [`stderr_path`](Self::stderr_path)) instead of this process's stderr.
    pub fn with_stderr_files(mut self) -> Self {
        self.stderr_files = true;
        self
    }

    /// Where incarnation `identity` of this slot writes its stderr, when
    /// [`with_stderr_files`](Self::with_stderr_files) was asked for.
    pub fn stderr_path(&self, identity: &str) -> PathBuf {
        self.dir.join(format!("{identity}.stderr"))
    }

    /// The slot's name (the same for every incarnation).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The current (or last) incarnation's identity.
    pub fn identity(&self) -> String {
        format!("{}-{}", self.name, self.incarnation)
    }

    pub fn incarnations(&self) -> u32 {
        self.incarnation
    }

    /// Whether an incarnation runs (as far as the last [`exited`](Self::exited) knows).
    pub fn is_running(&self) -> bool {
        self.child.is_some()
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
        let stderr = if self.stderr_files {
            let path = self.stderr_path(&env.identity);
            std::fs::File::create(&path)
                .map(Stdio::from)
                .map_err(|e| format!("{}: {e}", path.display()))?
        } else {
            Stdio::inherit()
        };
        let child = Command::new(exe)
            .envs(env.vars(self.prefix))
            .envs(self.extra.iter().cloned())
            .env("RUST_LOG", "off")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
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

    /// Asks the running incarnation to stop with SIGTERM (a graceful shutdown); it exits
    /// later, as [`exited`](Self::exited) tells.
    pub fn terminate(&self) -> Result<(), String> {
        let Some(child) = &self.child else {
            return Err(format!("{} does not run", self.identity()));
        };
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .map_err(|e| format!("signalling {}: {e}", self.identity()))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("kill -TERM {}: {status}", self.identity()))
        }
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

    /// The running incarnation's last snapshot.
    pub fn snapshot<T: DeserializeOwned>(&self) -> Option<T> {
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
pub fn all_intervals<'a>(
    slots: impl IntoIterator<Item = &'a Slot>,
) -> Result<Vec<Interval>, String> {
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
