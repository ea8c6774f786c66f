//! ConfigMaps in the test namespace: the objects most tests create, written straight into an
//! [`ApiServer`] (no HTTP), and their state as name → resourceVersion, for comparing a cache
//! or a handler's view with the server.

use std::collections::BTreeMap;

use apiserver_sim::ApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Resource;
use kube::api::ObjectMeta;

use crate::namespace::{SIMULATOR_NAMESPACE, ns};

/// The namespace every helper here works in.
pub const NS: &str = SIMULATOR_NAMESPACE;

/// The key of a ConfigMap's one data entry.
const VALUE_KEY: &str = "v";

/// What a set of ConfigMaps holds: name → resourceVersion. Every write changes the resource
/// version, so two states are equal exactly when both sides saw the same writes.
pub type State = BTreeMap<String, String>;

/// A ConfigMap named `name` in [`ns`]`()` (on the simulator [`NS`]) whose
/// one data entry `v` is `value`.
pub fn cm(name: &str, value: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns().into()),
            ..ObjectMeta::default()
        },
        data: Some([(VALUE_KEY.to_owned(), value.to_owned())].into()),
        ..ConfigMap::default()
    }
}

/// Creates or replaces [`cm`]`(name, value)` in [`NS`] on the server (the simulator's namespace,
/// as [`remove`] and [`server_state`] read it, also when the tests of the process run on a real
/// server); returns the stored object.
pub fn put(server: &ApiServer, name: &str, value: &str) -> ConfigMap {
    let mut obj = cm(name, value);
    obj.metadata.namespace = Some(NS.to_owned());
    match server.replace(&obj) {
        Ok(stored) => stored,
        Err(_) => server.create(&obj).expect("create the ConfigMap"),
    }
}

/// Deletes the ConfigMap `name` of [`NS`] on the server.
pub fn remove(server: &ApiServer, name: &str) {
    server
        .delete("", "configmaps", Some(NS), name)
        .expect("delete the ConfigMap");
}

/// The label of a test's own ConfigMaps ([`own_cm`]), value `"true"`. On a whole cluster the
/// controller-manager puts ConfigMaps of its own in every namespace (`kube-root-ca.crt`, and
/// on OpenShift's fork `openshift-service-ca.crt`); a cache or a list that selects
/// [`OWN_SELECTOR`] sees only what the test made, on the simulator and on any cluster.
pub const OWN_LABEL: &str = "kube-rt.dev/test-object";

/// The label selector of the ConfigMaps [`own_cm`] makes.
pub const OWN_SELECTOR: &str = "kube-rt.dev/test-object=true";

/// [`cm`]`(name, value)` labelled [`OWN_LABEL`]`=true`.
pub fn own_cm(name: &str, value: &str) -> ConfigMap {
    let mut obj = cm(name, value);
    obj.metadata.labels = Some([(OWN_LABEL.to_owned(), "true".to_owned())].into());
    obj
}

/// Whether `obj` carries [`OWN_LABEL`]`=true`, as [`own_cm`] makes it.
pub fn is_own(obj: &ConfigMap) -> bool {
    is_own_meta(&obj.metadata)
}

/// Whether an object's metadata carries [`OWN_LABEL`]`=true` (of any kind: a predicate's view).
pub fn is_own_meta(meta: &ObjectMeta) -> bool {
    meta.labels
        .as_ref()
        .and_then(|labels| labels.get(OWN_LABEL))
        .is_some_and(|value| value == "true")
}

/// An object's name, or "" without one.
pub fn name(obj: &ConfigMap) -> String {
    obj.metadata.name.clone().unwrap_or_default()
}

/// An object's resourceVersion, or "" without one.
pub fn rv(obj: &ConfigMap) -> String {
    obj.metadata.resource_version.clone().unwrap_or_default()
}

/// An object's value (its data entry `v`), or "" without one.
pub fn value(obj: &ConfigMap) -> String {
    obj.data
        .as_ref()
        .and_then(|data| data.get(VALUE_KEY).cloned())
        .unwrap_or_default()
}

/// The [`State`] of a set of ConfigMaps, typed or in any other representation (compact ones,
/// say): it reads their metadata only.
pub fn state_of<'a, K: Resource + 'a>(objs: impl IntoIterator<Item = &'a K>) -> State {
    objs.into_iter()
        .map(|obj| {
            let meta = obj.meta();
            (
                meta.name.clone().unwrap_or_default(),
                meta.resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// The [`State`] of the server's ConfigMaps in [`NS`].
pub fn server_state(server: &ApiServer) -> State {
    let objs = server.list::<ConfigMap>();
    state_of(
        objs.iter()
            .filter(|obj| obj.metadata.namespace.as_deref() == Some(NS)),
    )
}
