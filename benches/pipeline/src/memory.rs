//! Process memory from `/proc/<pid>/status` (`VmRSS`, `VmHWM`), and resetting the peak.

use anyhow::{Context, Result};

/// Resident and peak resident set size of this process, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// `VmRSS`: resident now.
    pub rss: u64,
    /// `VmHWM`: the peak since start (or since [`reset_peak`]).
    pub hwm: u64,
}

/// Reads this process's `VmRSS` and `VmHWM`.
pub fn read() -> Result<Memory> {
    read_from("/proc/self/status")
}

/// Reads `VmRSS` and `VmHWM` of the process `pid` (a child, say).
pub fn read_of(pid: u32) -> Result<Memory> {
    read_from(&format!("/proc/{pid}/status"))
}

fn read_from(path: &str) -> Result<Memory> {
    let status = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    let field = |name: &str| -> Result<u64> {
        let line = status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .with_context(|| format!("{name} missing from {path}"))?;
        let kib: u64 = line.trim().trim_end_matches("kB").trim().parse()?;
        Ok(kib * 1024)
    };
    Ok(Memory {
        rss: field("VmRSS:")?,
        hwm: field("VmHWM:")?,
    })
}

/// Resets `VmHWM` to the current RSS (Linux ≥ 4.0: writing 5 to `/proc/self/clear_refs`).
pub fn reset_peak() -> Result<()> {
    std::fs::write("/proc/self/clear_refs", "5")
        .context("resetting VmHWM via /proc/self/clear_refs")
}

unsafe extern "C" {
    /// glibc: returns free heap memory to the system (top of the heap and whole free pages).
    fn malloc_trim(pad: usize) -> i32;
}

/// Gives the allocator's free memory back to the system, so that the RSS read next counts what
/// is live (plus fragmentation inside partly used pages) rather than freed list buffers.
pub fn trim() {
    // SAFETY: malloc_trim only walks glibc's own heap under its locks; any pad value is valid.
    unsafe {
        malloc_trim(0);
    }
}
