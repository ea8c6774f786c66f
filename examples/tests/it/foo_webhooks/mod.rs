//! `foo-webhooks`: its webhooks called by the simulator in-process, and by the standalone
//! simulator binary under `kubectl`.

mod binary;
mod in_process;
mod kubectl;
mod manifests;

use examples::foo_webhooks::GROUP;
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
