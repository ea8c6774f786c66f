//! What the parent reads of the members' election on the server.

use apiserver_sim::ApiServer;
use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt;

use crate::member::LEASE;

/// The Lease holder on the server, if any.
pub fn lease_holder(server: &ApiServer) -> Option<String> {
    server
        .list::<Lease>()
        .into_iter()
        .find(|l| l.name_any() == LEASE)
        .and_then(|l| l.spec?.holder_identity)
        .filter(|h| !h.is_empty())
}
