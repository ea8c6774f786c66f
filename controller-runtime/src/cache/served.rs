//! Whether the API server serves a kind: [`DynamicKind::discover`] asks discovery, and
//! [`wait_served`] polls until a kind installed late (a CRD applied after the operator started)
//! is served.

use std::time::Duration;

use kube::api::ListParams;
use kube::core::GroupVersionKind;
use kube::discovery::{self, Scope};
use kube::{Api, Client};

use crate::cache::error::Error;
use crate::kind::DynamicKind;

/// How often [`wait_served`] asks the API server at most.
const SERVED_POLL_MAX: Duration = Duration::from_secs(2);
/// How often it asks at first.
const SERVED_POLL_MIN: Duration = Duration::from_millis(100);

impl DynamicKind {
    /// Asks the API server's discovery for `group`/`version` `kind`: its plural and scope.
    /// [`Error::KindNotServed`] if the server does not serve it (no such CRD, or not
    /// established yet).
    pub async fn discover(
        client: &Client,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Self, Error> {
        let gvk = GroupVersionKind::gvk(group, version, kind);
        match discovery::pinned_kind(client, &gvk).await {
            Ok((resource, capabilities)) => Ok(Self {
                resource,
                namespaced: capabilities.scope == Scope::Namespaced,
            }),
            Err(kube::Error::Api(status)) if status.code == 404 => Err(not_served(&gvk)),
            Err(kube::Error::Discovery(_)) => Err(not_served(&gvk)),
            Err(error) => Err(Error::Api(error)),
        }
    }
}

fn not_served(gvk: &GroupVersionKind) -> Error {
    let api_version = if gvk.group.is_empty() {
        gvk.version.clone()
    } else {
        format!("{}/{}", gvk.group, gvk.version)
    };
    Error::KindNotServed {
        kind: format!("{} ({api_version})", gvk.kind),
        waited: None,
    }
}

/// Polls `api` with a one-object list until it answers, for at most `timeout`; `kind` names
/// it in the error.
pub(crate) async fn wait_served<K>(
    api: &Api<K>,
    kind: String,
    timeout: Duration,
) -> Result<(), Error>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let deadline = tokio::time::Instant::now() + timeout;
    let mut pause = SERVED_POLL_MIN;
    loop {
        match api.list_metadata(&ListParams::default().limit(1)).await {
            Ok(_) => return Ok(()),
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => return Err(Error::Api(error)),
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(Error::KindNotServed {
                kind,
                waited: Some(timeout),
            });
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(SERVED_POLL_MAX);
    }
}
