//! The front of a soak binary that is its own harness (`harness = false`): it answers
//! `--list`, honours name filters like libtest, and prints the result lines `cargo test`
//! expects.

use std::process::ExitCode;

/// Runs the one test `name` (unless a filter on the command line excludes it): `soak` returns
/// its summary line, or what failed.
pub fn run_test(name: &str, soak: impl FnOnce() -> Result<String, String>) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("{name}: test");
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str())) {
        println!(
            "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 1 filtered out\n"
        );
        return ExitCode::SUCCESS;
    }
    println!("\nrunning 1 test");
    match soak() {
        Ok(summary) => {
            println!("{summary}");
            println!(
                "test {name} ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
            );
            ExitCode::SUCCESS
        }
        Err(failure) => {
            println!("{failure}");
            println!(
                "test {name} ... FAILED\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
            );
            ExitCode::FAILURE
        }
    }
}

/// The unsigned integer in the environment variable `name` (unset or blank: `default`).
pub fn env_number(name: &str, default: u64) -> Result<u64, String> {
    match std::env::var(name).ok().filter(|v| !v.trim().is_empty()) {
        None => Ok(default),
        Some(v) => v
            .trim()
            .parse()
            .map_err(|_| format!("{name} must be an unsigned integer, not {v:?}")),
    }
}
