//! [`ApiServer::install_crd`]: a CustomResourceDefinition created and established in one call,
//! for tests that need a custom kind served before they start.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::handle::ApiServer;
use crate::error::{Error, Result};
use crate::kinds::crd;
use crate::machinery::resource_info::GroupResource;

impl ApiServer {
    /// Creates `crd` as a POST would and returns it once it is established and its custom
    /// resources are served (what a test would otherwise do by polling the `Established`
    /// condition). An invalid CRD or one whose name is taken is refused with the Status a real
    /// server sends ([`Error::Api`]); a CRD that does not become established (its names conflict
    /// with a served kind) is [`Error::UnknownResource`].
    pub async fn install_crd(
        &self,
        crd: &CustomResourceDefinition,
    ) -> Result<CustomResourceDefinition> {
        self.create(crd)?;
        // The CRD controller establishes new CRDs; settling runs it to completion.
        self.settle().await;
        let name = crd.metadata.name.clone().unwrap_or_default();
        let plural = &crd.spec.names.plural;
        let stored = self
            .objects("apiextensions.k8s.io", "customresourcedefinitions")
            .into_iter()
            .find(|obj| obj.pointer("/metadata/name").and_then(|n| n.as_str()) == Some(&name));
        let served = self
            .shared
            .state
            .lock()
            .served_info(&GroupResource::new(&crd.spec.group, plural))
            .is_some();
        match stored {
            Some(stored) if served && crd::is_established(&stored) => {
                Ok(serde_json::from_value(stored)?)
            }
            _ => Err(Error::UnknownResource(format!(
                "{plural}.{} (the CRD {name} was created but is not established)",
                crd.spec.group
            ))),
        }
    }
}
