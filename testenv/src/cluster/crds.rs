//! CRDs installed on an existing cluster through its API: applied (so a CRD left by an earlier
//! run is brought up to date), then awaited until established and served.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use kube::api::{DynamicObject, ListParams, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};

use super::ExistingCluster;
use crate::error::Error;
use crate::wait::eventually;

/// The field manager the environment applies CRDs as.
const FIELD_MANAGER: &str = "kube-rt-testenv";

impl ExistingCluster {
    /// Applies `crd` and returns it once it is `Established` and its storage version's custom
    /// resources are listed, waiting at most `timeout`.
    pub async fn install_crd(
        &self,
        crd: &CustomResourceDefinition,
        timeout: Duration,
    ) -> Result<CustomResourceDefinition, Error> {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let crd_error = |source: Box<dyn std::error::Error + Send + Sync>| Error::Crd {
            name: name.clone(),
            source,
        };
        let api: Api<CustomResourceDefinition> = Api::all(self.client());
        let mut desired = crd.clone();
        desired.metadata.managed_fields = None;
        desired.metadata.resource_version = None;
        desired.status = None;
        api.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&desired),
        )
        .await
        .map_err(|e| crd_error(Box::new(e)))?;
        let established = eventually(format!("CRD {name} to be established"), timeout, || {
            let api = api.clone();
            let name = name.clone();
            async move {
                api.get(&name)
                    .await
                    .map(|crd| is_established(&crd).then_some(crd))
            }
        })
        .await?;
        let resource = storage_resource(&established)
            .ok_or_else(|| crd_error("it has no served storage version".into()))?;
        let client = self.client();
        eventually(format!("{} to be served", resource.plural), timeout, || {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
            async move {
                api.list(&ListParams::default().limit(1))
                    .await
                    .map(|_| true)
            }
        })
        .await?;
        Ok(established)
    }
}

/// Whether the CRD's `Established` condition is true.
fn is_established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|status| status.conditions.as_ref())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}

/// The resource of the CRD's storage version, if it is served.
fn storage_resource(crd: &CustomResourceDefinition) -> Option<ApiResource> {
    let version = crd
        .spec
        .versions
        .iter()
        .find(|version| version.storage && version.served)?;
    let gvk = GroupVersionKind::gvk(&crd.spec.group, &version.name, &crd.spec.names.kind);
    Some(ApiResource::from_gvk_with_plural(
        &gvk,
        &crd.spec.names.plural,
    ))
}
