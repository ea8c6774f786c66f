//! Tests that own process-wide state, run one after another on one thread in one process: this
//! binary is its own harness (`harness = false`), so none of them shares the process with
//! another test running at the same time. In order:
//!
//! 1. `tracing_span`: installs a tracing subscriber before anything registers the `reconcile`
//!    call site;
//! 2. `inferred_config`: sets `KUBECONFIG`;
//! 3. `signals`: sends SIGTERM and SIGINT to the process (last: the handlers stay installed).
//!
//! One binary instead of three: each test binary links kube, hyper and k8s-openapi again.

#[path = "../common/mod.rs"]
mod common;

mod inferred_config;
mod signals;
mod tracing_span;

use std::future::Future;
use std::pin::Pin;

type Test = fn() -> Pin<Box<dyn Future<Output = ()>>>;

/// Runs `test` on a fresh single-threaded runtime (tokio's test default), with time paused when
/// `paused`.
fn run(name: &str, paused: bool, test: Test) {
    print!("test {name} ... ");
    let mut builder = tokio::runtime::Builder::new_current_thread();
    builder.enable_all().start_paused(paused);
    let runtime = builder.build().expect("a tokio runtime");
    runtime.block_on(test());
    println!("ok");
}

fn main() {
    let tests: [(&str, bool, Test); 3] = [
        (
            "tracing_span::each_reconcile_runs_in_a_span_with_controller_key_and_id",
            true,
            || Box::pin(tracing_span::each_reconcile_runs_in_a_span_with_controller_key_and_id()),
        ),
        (
            "inferred_config::the_client_is_inferred_from_the_environment",
            false,
            || Box::pin(inferred_config::the_client_is_inferred_from_the_environment()),
        ),
        ("signals::a_second_signal_exits_at_once", false, || {
            Box::pin(signals::a_second_signal_exits_at_once())
        }),
    ];
    println!("\nrunning {} tests", tests.len());
    for (name, paused, test) in tests {
        run(name, paused, test);
    }
    println!("\ntest result: ok. {} passed; 0 failed\n", tests.len());
}
