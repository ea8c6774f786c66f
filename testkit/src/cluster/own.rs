//! A test's own ConfigMaps on a [`TestCluster`]: those labelled [`OWN_LABEL`](crate::config_maps::OWN_LABEL), apart from
//! what a whole cluster's controllers put in [`ns`]`()` (the root CA's ConfigMap).

use k8s_openapi::api::core::v1::ConfigMap;

use crate::config_maps::{State, is_own, own_cm, state_of};

use super::{Error, TestCluster, ns};

impl TestCluster {
    /// Creates or replaces the ConfigMap `name` of [`ns`]`()` with the value `value`, labelled
    /// [`OWN_LABEL`](crate::config_maps::OWN_LABEL) ([`own_cm`]).
    pub async fn put_own(&self, name: &str, value: &str) -> Result<ConfigMap, Error> {
        self.create_or_replace(&own_cm(name, value)).await
    }

    /// The [`State`] of the ConfigMaps in [`ns`]`()` labelled [`OWN_LABEL`](crate::config_maps::OWN_LABEL).
    pub async fn own_state(&self) -> Result<State, Error> {
        let objs = self.list::<ConfigMap>().await?;
        Ok(state_of(objs.iter().filter(|obj| {
            obj.metadata.namespace.as_deref() == Some(ns()) && is_own(obj)
        })))
    }
}
