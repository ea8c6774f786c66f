//! The README's first command: `sample-controller` with no cluster configured starts the
//! embedded server, syncs `example-foo`, and stops cleanly on Ctrl-C.

use crate::common;

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};

const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_mode_syncs_example_foo_and_shuts_down_on_sigint() {
    let home = tempfile::tempdir().unwrap();
    let mut child = common::sample_controller(home.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = stdout.next_line().await.unwrap().unwrap();
    assert_eq!(
        first,
        "sample-controller: no cluster configured, using an embedded apiserver-sim"
    );

    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    let synced = tokio::time::timeout(DEADLINE, async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains("Foo synced successfully") && line.contains("default/example-foo") {
                return;
            }
        }
        panic!("sample-controller exited before syncing example-foo");
    });
    synced
        .await
        .expect("example-foo synced within the deadline");

    common::interrupt_and_expect_clean_exit(&mut child, DEADLINE).await;
}
