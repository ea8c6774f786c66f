//! Logging setup shared by the binaries: `tracing` to stderr, filtered by `RUST_LOG` (default:
//! `info`, with the embedded apiserver-sim's per-request lines at `warn`).

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The filter used when `RUST_LOG` is not set.
pub const DEFAULT_FILTER: &str = "info,apiserver_sim=warn";

/// Installs the global subscriber; a second call is a no-op.
pub fn init() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    let _already_set = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
