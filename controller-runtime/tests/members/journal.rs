//! The reconcile log each member process appends to, and reading it back.
//!
//! One JSON object per line, each written with a single `write` on a file opened for
//! appending, so a process killed at any moment leaves whole lines: a `begin` when a reconcile
//! starts and an `end` when it returns or is dropped (a member killed mid-reconcile leaves a
//! `begin` alone). Times are microseconds of the wall clock, shared by every process on the
//! machine, and comparable with the Lease's own timestamps.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

/// Microseconds since the Unix epoch.
pub fn now_us() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

/// One line of a reconcile log.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "lowercase")]
pub enum Line {
    /// A reconcile started.
    Begin {
        id: u64,
        member: String,
        controller: String,
        key: String,
        /// The primary's resourceVersion in the cache (None: absent).
        seen_rv: Option<String>,
        at_us: i64,
    },
    /// A reconcile returned (`ok`: successfully) or was dropped (`ok` false, `dropped`).
    End {
        id: u64,
        ok: bool,
        dropped: bool,
        at_us: i64,
    },
}

/// Appends lines to a member's log.
#[derive(Clone)]
pub struct Writer {
    file: Arc<Mutex<File>>,
    member: String,
    next: Arc<AtomicU64>,
}

impl Writer {
    pub fn open(path: &Path, member: &str) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self {
            file: Arc::new(Mutex::new(file)),
            member: member.to_owned(),
            next: Arc::default(),
        })
    }

    fn write(&self, line: &Line) {
        let mut text = serde_json::to_vec(line).unwrap_or_default();
        text.push(b'\n');
        // A lost line would show as a reconcile outside any term or never ended: the checks
        // in the parent catch it, so a failed write is not fatal here.
        let _ = self.file.lock().write_all(&text);
    }

    /// Logs the start of a reconcile; the returned guard logs its end.
    pub fn begin(&self, controller: &str, key: String, seen_rv: Option<String>) -> Reconcile {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.write(&Line::Begin {
            id,
            member: self.member.clone(),
            controller: controller.to_owned(),
            key,
            seen_rv,
            at_us: now_us(),
        });
        Reconcile {
            writer: self.clone(),
            id,
            ok: None,
        }
    }
}

/// A reconcile in progress: its end is logged when it is dropped, returned or not.
pub struct Reconcile {
    writer: Writer,
    id: u64,
    ok: Option<bool>,
}

impl Reconcile {
    pub fn finish<T, E>(mut self, result: Result<T, E>) -> Result<T, E> {
        self.ok = Some(result.is_ok());
        result
    }
}

impl Drop for Reconcile {
    fn drop(&mut self) {
        self.writer.write(&Line::End {
            id: self.id,
            ok: self.ok.unwrap_or(false),
            dropped: self.ok.is_none(),
            at_us: now_us(),
        });
    }
}

/// A reconcile as read back from the logs.
#[derive(Debug, Clone)]
pub struct Interval {
    pub member: String,
    pub controller: String,
    pub key: String,
    pub seen_rv: Option<String>,
    pub start_us: i64,
    /// When it returned; for one its process was killed in, the kill.
    pub end_us: i64,
    pub ok: bool,
    /// Its process was killed before it returned.
    pub killed: bool,
}

/// Reads a member's log; `ended_us` closes reconciles the member never finished (it was
/// killed then).
pub fn read(path: &Path, ended_us: i64) -> Result<Vec<Interval>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut open: HashMap<u64, Interval> = HashMap::new();
    let mut done = Vec::new();
    // A member still running may be writing its last line: only whole lines count.
    let whole = text.rfind('\n').map_or("", |end| &text[..end]);
    for (n, raw) in whole.lines().enumerate() {
        let line: Line = serde_json::from_str(raw)
            .map_err(|e| format!("{} line {}: {e}: {raw:?}", path.display(), n + 1))?;
        match line {
            Line::Begin {
                id,
                member,
                controller,
                key,
                seen_rv,
                at_us,
            } => {
                open.insert(
                    id,
                    Interval {
                        member,
                        controller,
                        key,
                        seen_rv,
                        start_us: at_us,
                        end_us: ended_us,
                        ok: false,
                        killed: true,
                    },
                );
            }
            Line::End { id, ok, at_us, .. } => {
                let mut interval = open
                    .remove(&id)
                    .ok_or_else(|| format!("{}: an end without a begin", path.display()))?;
                interval.end_us = at_us;
                interval.ok = ok;
                interval.killed = false;
                done.push(interval);
            }
        }
    }
    done.extend(open.into_values());
    Ok(done)
}
