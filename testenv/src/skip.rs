//! Skipping, with a notice, what a real API server cannot do for a test, and the tests that need
//! testenv's own control plane when no binaries are given; and the notice of a test that reached
//! a real API server, so a run's output tells which tests ran there.

use std::path::PathBuf;

use crate::lane::{ASSETS_VAR, Lane, named_assets, on_existing_cluster};

/// The start of every skip notice, to count skipped tests in a test run's output.
pub const SKIP_NOTICE: &str = "kube-rt-testenv: skipped";

/// Prints that the running test is skipped because it needs `what` of the simulator, and which
/// real API server it runs on instead.
pub(crate) fn notice(what: &str) {
    let lane = match Lane::from_env() {
        Ok(Lane::Simulator) => "the test's builder named it".to_owned(),
        Ok(lane) => lane.reason(),
        Err(conflict) => conflict,
    };
    print_notice(&format!(
        "on a real API server ({lane}): {} needs the simulator's {what}",
        test_name()
    ));
}

/// The start of the notice a test prints when it connects to a real API server, to count the
/// tests of a run that reached one (a test that connects and then skips prints both).
pub const REACHED_NOTICE: &str = "kube-rt-testenv: reached";

/// Prints that the running test connected to a real API server, working in `namespace`.
pub(crate) fn reached_notice(namespace: &str) {
    let lane = match Lane::from_env() {
        Ok(Lane::Simulator) => "a kubeconfig the test named".to_owned(),
        Ok(lane) => lane.reason(),
        Err(conflict) => conflict,
    };
    print_line(&format!(
        "{REACHED_NOTICE} a real API server ({lane}): {} in namespace {namespace}\n",
        test_name()
    ));
}

/// Prints `{SKIP_NOTICE} {rest}` straight to the process's standard error, past the test
/// harness's capture, so a run shows (and a reader can count) every skip.
fn print_notice(rest: &str) {
    print_line(&format!("{SKIP_NOTICE} {rest}\n"));
}

/// Writes `line` to the process's standard error, past the test harness's capture.
fn print_line(line: &str) {
    use std::io::Write;
    // Nothing to do if standard error is closed.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The running test's name (the harness names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("this test")
        .to_owned()
}

/// For tests that start a simulator of their own: `true` (after printing a skip notice naming
/// `what` the test needs of the simulator) when the tests run on a real API server
/// ([`on_existing_cluster`]), so the test returns early; `false` otherwise.
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

/// For tests of testenv's own control plane: the directory of binaries [`ASSETS_VAR`] names, or
/// `None` after printing a skip notice that the test needs a control plane for `what`.
///
/// ```
/// let Some(assets) = testenv::assets_or_skip("a controller-manager") else {
///     return;
/// };
/// # let _ = assets;
/// ```
pub fn assets_or_skip(what: &str) -> Option<PathBuf> {
    let assets = named_assets();
    if assets.is_none() {
        print_notice(&format!(
            "without a control plane's binaries ({ASSETS_VAR} is not set): {} needs testenv's \
             own control plane for {what}",
            test_name()
        ));
    }
    assets
}
