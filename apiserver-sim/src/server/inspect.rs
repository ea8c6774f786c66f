//! Inspection: the server's own view of its objects, open watches and request counts, and
//! [`ApiServer::settle`], for convergence checks in tests.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::handle::ApiServer;
use crate::machinery::resource_info::GroupResource;

/// Inspection: what the server holds and has seen.
impl ApiServer {
    /// Every object of a resource as the server stores it, in key order
    /// (`group` is "" for the core group); a resource stored with another (events.k8s.io
    /// events) in its own served form.
    pub fn objects(&self, group: &str, plural: &str) -> Vec<Value> {
        let st = self.shared.state.lock();
        let Some(info) = st.served_info(&GroupResource::new(group, plural)) else {
            return Vec::new();
        };
        let version = info.storage_version();
        st.resource(&info.key())
            .map(|r| {
                r.objects
                    .values()
                    .map(|v| match info.stored_with {
                        Some(_) => info.to_served(version, &v.obj),
                        None => (*v.obj).clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every object of a typed resource, decoded (objects that fail to decode are skipped
    /// with a warning).
    pub fn list<K>(&self) -> Vec<K>
    where
        K: kube::Resource<DynamicType = ()> + DeserializeOwned,
    {
        self.objects(&K::group(&()), &K::plural(&()))
            .into_iter()
            .filter_map(|v| match serde_json::from_value(v) {
                Ok(k) => Some(k),
                Err(e) => {
                    tracing::warn!(error = %e, "stored object does not decode as the requested type");
                    None
                }
            })
            .collect()
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.state.lock().rv
    }

    /// Runs the background controllers (CRD, namespace, garbage collector) until they
    /// have nothing left to do.
    pub async fn settle(&self) {
        crate::controllers::run_until_quiet(&self.shared);
        tokio::task::yield_now().await;
    }

    /// Number of watch streams currently open (a client that disconnects is dropped promptly).
    pub fn open_watches(&self) -> usize {
        self.shared
            .open_watches
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Requests received for `resource` (plural, e.g. `pods`, or a CRD plural; `pods/status`
    /// for a subresource) with `verb`: one of get, list, watch, create, update, patch,
    /// delete, deletecollection (a GET with `watch=true` or under `/watch/` is a watch).
    /// Every request that reached routing counts, including ones failed by a fault rule,
    /// by the unready fault, or answered 404 because the resource is not served.
    pub fn request_count(&self, verb: &str, resource: &str) -> u64 {
        self.shared.requests.get(verb, resource)
    }

    /// Sets every request count back to 0.
    pub fn reset_request_counts(&self) {
        self.shared.requests.reset();
    }

    /// Every non-zero request count: resource → verb → count (what `GET /__sim/requests`
    /// returns).
    pub fn request_counts(&self) -> BTreeMap<String, BTreeMap<&'static str, u64>> {
        self.shared.requests.snapshot()
    }
}
