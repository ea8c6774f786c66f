//! Skipping, with a notice, what an existing cluster cannot do for a test.

use crate::kubeconfig_var::{KUBECONFIG_VAR, on_existing_cluster};

/// The start of every skip notice, to count skipped tests in a test run's output.
pub const SKIP_NOTICE: &str = "kube-rt-testenv: skipped on an existing cluster";

/// Prints that the running test is skipped because it needs `what` of the simulator: straight
/// to the process's standard error, past the test harness's capture, so a run shows (and a
/// reader can count) every skip.
pub(crate) fn notice(what: &str) {
    use std::io::Write;
    let test = std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_owned();
    let line =
        format!("{SKIP_NOTICE} ({KUBECONFIG_VAR} is set): {test} needs the simulator's {what}\n");
    // Nothing to do if standard error is closed.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// For tests that start a simulator of their own: `true` (after printing a skip notice naming
/// `what` the test needs of the simulator) when [`KUBECONFIG_VAR`] names an existing cluster,
/// so the test returns early; `false` otherwise.
///
/// ```
/// if testenv::skip_on_existing_cluster("fault injection") {
///     return;
/// }
/// ```
pub fn skip_on_existing_cluster(what: &str) -> bool {
    let skip = on_existing_cluster();
    if skip {
        notice(what);
    }
    skip
}
