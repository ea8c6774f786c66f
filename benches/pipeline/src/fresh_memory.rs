//! `fresh-memory`: what the machine charges for memory a process touches for the first time.
//! A cache that grows by gigabytes writes every one of its pages once; on a virtual machine the
//! first write to a page can cost more the more memory is fresh (the hypervisor backs the
//! guest's pages as they are touched). This maps zeroed memory of each size and writes one byte
//! per page, timing the writes: the cost per page at each size, in this process alone.

use std::time::Instant;

use anyhow::{Result, ensure};
use serde::Serialize;

use crate::cpu;

/// Bytes of one page (the kernel's base page; a larger one would only lower the figures).
const PAGE: usize = 4096;

/// The cost of first writes to one size of fresh memory.
#[derive(Debug, Serialize)]
pub struct FreshMemoryPoint {
    /// Bytes mapped and written.
    pub bytes: usize,
    /// Pages written (one byte each).
    pub pages: usize,
    /// Wall-clock microseconds per page.
    pub wall_per_page_us: f64,
    /// CPU microseconds of this process per page (the page faults are its own CPU time).
    pub cpu_per_page_us: f64,
}

/// Every size, in the given order (a size may be given twice to see a second touch).
#[derive(Debug, Serialize)]
pub struct FreshMemoryFigures {
    /// One point per size.
    pub points: Vec<FreshMemoryPoint>,
}

/// Maps and writes `gib` GiB of fresh memory for each entry, one after the other, freeing each
/// before the next.
pub fn run(gib: &[f64]) -> Result<FreshMemoryFigures> {
    let mut points = Vec::with_capacity(gib.len());
    for &size in gib {
        ensure!(
            size.is_finite() && size > 0.0,
            "a size must be a positive number of GiB, not {size}"
        );
        let bytes = (size * f64::from(1u32 << 30)) as usize;
        // A zeroed allocation this large is a fresh mapping: no page is touched until written.
        let mut memory = vec![0u8; bytes];
        let (started, cpu_before) = (Instant::now(), cpu::process()?);
        let mut pages = 0;
        for byte in memory.iter_mut().step_by(PAGE) {
            *byte = 1;
            pages += 1;
        }
        let (wall, cpu) = (
            started.elapsed(),
            cpu::process()?.saturating_sub(cpu_before),
        );
        // The writes must happen: the memory is freed unread otherwise.
        std::hint::black_box(&memory);
        ensure!(
            pages == bytes.div_ceil(PAGE) && memory.first() == Some(&1),
            "wrote {pages} of {} pages",
            bytes.div_ceil(PAGE)
        );
        drop(memory);
        points.push(FreshMemoryPoint {
            bytes,
            pages,
            wall_per_page_us: wall.as_secs_f64() * 1e6 / pages as f64,
            cpu_per_page_us: cpu.as_secs_f64() * 1e6 / pages as f64,
        });
    }
    Ok(FreshMemoryFigures { points })
}
