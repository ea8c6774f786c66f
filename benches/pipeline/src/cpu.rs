//! CPU time of this process, of another one and of the calling thread, from `/proc` (user +
//! system, in clock ticks of 10 ms): what a run spent itself, whatever the other processes of the
//! machine (the bench server included) did meanwhile.

use std::time::Duration;

use anyhow::{Context, Result};

/// Clock ticks per second of `/proc/*/stat` (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
const TICKS_PER_SECOND: u64 = 100;

/// User plus system CPU time this process has used so far, all threads.
pub fn process() -> Result<Duration> {
    read("/proc/self/stat")
}

/// User plus system CPU time the process `pid` (a child, say) has used so far, all threads.
pub fn of_process(pid: u32) -> Result<Duration> {
    read(&format!("/proc/{pid}/stat"))
}

/// User plus system CPU time the calling thread has used so far.
pub fn thread() -> Result<Duration> {
    read("/proc/thread-self/stat")
}

fn read(path: &str) -> Result<Duration> {
    let stat = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    // The command name (field 2) may contain spaces; the fields after it start past its `)`.
    let after_name = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest)
        .with_context(|| format!("{path} has no command name"))?;
    // Fields 3.. of stat(5): state is field 3, utime field 14, stime field 15.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let tick = |index: usize| -> Result<u64> {
        fields
            .get(index)
            .with_context(|| format!("{path}: field {} missing", index + 3))?
            .parse()
            .with_context(|| format!("{path}: field {} is not a number", index + 3))
    };
    let ticks = tick(11)? + tick(12)?;
    Ok(Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND))
}
