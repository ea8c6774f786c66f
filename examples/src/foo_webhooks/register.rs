//! [`register`]: what the operator adds to its manager — two admission webhooks, one
//! conversion, one controller.

use controller_runtime::webhook::{Conversion, Webhook};
use controller_runtime::{Controller, ControllerHandle, Manager};
use k8s_openapi::api::apps::v1::Deployment;

use super::admission::{FooDefaulter, FooValidator};
use super::names::{CONTROLLER_NAME, MUTATING_WEBHOOK, VALIDATING_WEBHOOK};
use super::reconcile::FooReconciler;
use super::{v1, v1alpha1};

/// Registers with `manager` (built with a webhook server) the validating and defaulting
/// webhooks of `v1` Foos, the conversion of `v1alpha1` through the `v1` hub, and the
/// controller of `v1` Foos and their Deployments.
pub fn register(manager: &Manager) -> Result<ControllerHandle, controller_runtime::Error> {
    manager.add_webhook(Webhook::validator::<v1::Foo>(FooValidator).named(VALIDATING_WEBHOOK))?;
    manager.add_webhook(Webhook::defaulter::<v1::Foo>(FooDefaulter).named(MUTATING_WEBHOOK))?;
    manager.add_conversion(Conversion::hub::<v1::Foo>().spoke::<v1alpha1::Foo>())?;
    Controller::new(manager)
        .for_::<v1::Foo>()
        .owns::<Deployment>()
        .named(CONTROLLER_NAME)
        .build(FooReconciler)
}
