//! Every request is logged with `tracing`: method, path, status and duration.

use crate::common;

use std::io::Write;
use std::sync::Arc;

use parking_lot::Mutex;
use tracing_subscriber::fmt::MakeWriter;

/// Collects everything the subscriber writes.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;
    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

/// The log lines that name `method`, `path` and `status`.
fn lines_for(log: &Captured, method: &str, path: &str, status: u16) -> Vec<String> {
    let text = String::from_utf8_lossy(&log.0.lock()).into_owned();
    let wanted = [
        format!("method={method} "),
        format!("path={path} "),
        format!("status={status} "),
    ];
    text.lines()
        .filter(|l| wanted.iter().all(|w| l.contains(w.as_str())))
        .map(str::to_string)
        .collect()
}

// A current-thread runtime: the server's tasks run on this thread, under the
// thread-local subscriber set below (no process-wide state is touched).
#[tokio::test(flavor = "current_thread")]
async fn every_request_is_logged_with_method_path_status_and_duration() {
    let log = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(log.clone())
        .with_ansi(false)
        .with_max_level(tracing::Level::INFO)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = common::server().await;
    // Tracing caches per call site whether anyone listens. A call site that another test's
    // thread registered while this subscriber was being installed may have cached "no";
    // rebuild the cache until a request shows up in the log.
    common::eventually_async("requests reach the subscriber", common::LIMIT, || {
        tracing::callsite::rebuild_interest_cache();
        let log = log.clone();
        let server = &server;
        async move {
            common::raw(server, "GET", "/livez", &[], b"").await;
            !lines_for(&log, "GET", "/livez", 200).is_empty()
        }
    })
    .await;
    let cms = "/api/v1/namespaces/default/configmaps";
    let json = [("Content-Type", "application/json")];
    let created = common::raw(&server, "POST", cms, &json, br#"{"metadata":{"name":"a"}}"#).await;
    assert_eq!(created.status, 201);
    let missing = format!("{cms}/missing");
    assert_eq!(
        common::raw(&server, "GET", &missing, &[], b"").await.status,
        404
    );
    assert_eq!(
        common::raw(&server, "GET", "/nope", &[], b"").await.status,
        404
    );
    let bad = common::raw(&server, "POST", cms, &json, b"{not json").await;
    assert_eq!(bad.status, 400);

    for (method, path, status) in [
        ("POST", cms, 201),
        ("POST", cms, 400),
        ("GET", missing.as_str(), 404),
        ("GET", "/nope", 404),
    ] {
        let lines = lines_for(&log, method, path, status);
        assert_eq!(
            lines.len(),
            1,
            "{method} {path} {status} logged once: {lines:?}"
        );
        assert!(lines[0].contains(" INFO "), "{lines:?}");
        assert!(lines[0].contains("duration_us="), "{lines:?}");
    }
}
