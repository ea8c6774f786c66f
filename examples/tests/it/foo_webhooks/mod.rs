//! `foo-webhooks`: its webhooks called by the simulator in-process, and by the standalone
//! simulator binary under `kubectl`; its parts that need no server. The binary's source is
//! compiled into these tests as [`example`].

/// The `foo-webhooks` binary's source.
#[path = "../../../src/bin/foo-webhooks/main.rs"]
#[allow(dead_code)]
mod example;

mod binary;
mod in_process;
mod kubectl;
mod manifests;
mod units;

use example::names::GROUP;
use kube::core::{ApiResource, Status};

/// Foo at `version`, for reading it untyped (and seeing the `apiVersion` the server sent).
pub fn foo_resource(version: &str) -> ApiResource {
    ApiResource {
        group: GROUP.to_owned(),
        version: version.to_owned(),
        api_version: format!("{GROUP}/{version}"),
        kind: "Foo".to_owned(),
        plural: "foos".to_owned(),
    }
}

/// The API server's refusal in `result`.
pub fn refusal<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected the API server to refuse, got {other:?}"),
    }
}
