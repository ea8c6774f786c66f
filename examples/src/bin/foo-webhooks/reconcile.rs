//! [`FooReconciler`]: keeps each Foo's Deployment (named and sized as the Foo's `v1` spec says,
//! controlled by the Foo) and reports its available replicas in the Foo's status.

use std::collections::BTreeMap;

use controller_runtime::prelude::*;
use controller_runtime::util::create_or_update;
use examples::deployment::nginx_deployment_spec;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};

use super::names::CONTROLLER_NAME;
use super::v1::Foo;

/// The reconciler of `v1` Foos (the storage version: the manager's cache lists them without
/// conversion).
#[derive(Clone, Copy, Debug, Default)]
pub struct FooReconciler;

impl Reconciler<Foo> for FooReconciler {
    type Error = ReconcileError;

    async fn reconcile(
        &self,
        request: Request,
        ctx: Context<Foo>,
    ) -> Result<Action, ReconcileError> {
        // Gone: the garbage collector deletes the Deployment it controlled.
        let Some(foo) = ctx.get() else {
            return Ok(Action::done());
        };
        let deployment_name = foo.spec.deployment.name.as_str();
        if deployment_name.is_empty() {
            // Only a Foo written before the validating webhook was installed lacks it.
            tracing::warn!(foo = %request.key, "no spec.deployment.name; nothing to do");
            return Ok(Action::done());
        }
        let deployments: Api<Deployment> = Api::namespaced(
            ctx.client().clone(),
            request.namespace().unwrap_or("default"),
        );
        let mut not_ours = None;
        let (deployment, _) = create_or_update(&deployments, deployment_name, |deployment| {
            match set_controller_reference(foo.as_ref(), deployment) {
                Ok(()) => desired_state(&foo, deployment),
                // Left untouched: create_or_update then writes nothing.
                Err(error) => not_ours = Some(error),
            }
        })
        .await?;
        if let Some(error) = not_ours {
            // Another controller owns a Deployment of that name: retrying cannot fix it.
            return Err(ReconcileError::terminal(error));
        }

        let available = deployment
            .status
            .as_ref()
            .and_then(|status| status.available_replicas)
            .unwrap_or(0);
        if foo.status.as_ref().map(|status| status.available_replicas) != Some(available) {
            let status = serde_json::json!({"status": {"availableReplicas": available}});
            ctx.patch_status(
                &PatchParams {
                    field_manager: Some(CONTROLLER_NAME.to_owned()),
                    ..PatchParams::default()
                },
                &Patch::Merge(&status),
            )
            .await?;
        }
        ctx.normal_event(
            "Synced",
            format!("Deployment {deployment_name} has {available} available replicas"),
        );
        Ok(Action::done())
    }
}

/// Sets the replicas of `deployment`, and — on a new one — its selector and pod template (one
/// `nginx` container, labels `app=foo-webhooks` and `foo=<name>`). An existing Deployment's
/// template is left as the server defaulted it, so that an unchanged Foo writes nothing.
fn desired_state(foo: &Foo, deployment: &mut Deployment) {
    if deployment.metadata.resource_version.is_none() {
        let labels = BTreeMap::from([
            ("app".to_owned(), CONTROLLER_NAME.to_owned()),
            ("foo".to_owned(), foo.name_any()),
        ]);
        deployment.spec = nginx_deployment_spec(labels, None);
    }
    deployment.spec.replicas = foo.spec.deployment.replicas;
}
