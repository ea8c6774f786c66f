//! What the tests of the control plane's lifetime look at: whether a process runs, and which
//! processes name a directory on their command line (the servers' flags and the watchdog's
//! argument all name the data directory).

use std::path::Path;

/// Whether `pid` runs (a zombie, killed and not yet reaped, does not).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name's closing parenthesis.
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// The live processes whose command line mentions `dir`, as `pid: command line`.
pub fn mentioning(dir: &Path) -> Vec<String> {
    let needle = dir.to_string_lossy().into_owned();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != std::process::id() && alive(pid))
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            cmdline
                .contains(&needle)
                .then(|| format!("{pid}: {cmdline}"))
        })
        .collect()
}
