//! The admission webhooks of Foo, on the hub version `v1` (the API server converts requests in
//! other versions to it, `matchPolicy: Equivalent`): [`FooValidator`] refuses a Foo whose
//! Deployment could not exist or whose Deployment is renamed; [`FooDefaulter`] sets the
//! replicas a Foo leaves out.

use controller_runtime::webhook::{AdmissionRequest, Defaulter, Denial, Validation, Validator};

use super::v1::{Foo, FooDeployment};

/// Replicas a Foo gets when it names none.
pub const DEFAULT_REPLICAS: i32 = 1;
/// The most replicas a Foo may ask for.
pub const MAX_REPLICAS: i32 = 10;

/// Checks a Foo's Deployment: `name` a lowercase RFC 1123 subdomain, `replicas` (when set)
/// from 1 to [`MAX_REPLICAS`]. The error is the message the API client sees.
pub fn check_deployment(deployment: &FooDeployment) -> Result<(), String> {
    let name = deployment.name.as_str();
    if name.is_empty() {
        return Err("spec.deployment.name: Required value: the Deployment to keep".to_owned());
    }
    if !is_dns_subdomain(name) {
        return Err(format!(
            "spec.deployment.name: Invalid value: {name:?}: a Deployment name must be a \
             lowercase RFC 1123 subdomain (lowercase letters, digits, '-' and '.', starting \
             and ending with a letter or digit, at most 253 characters)"
        ));
    }
    match deployment.replicas {
        Some(replicas) if !(1..=MAX_REPLICAS).contains(&replicas) => Err(format!(
            "spec.deployment.replicas: Invalid value: {replicas}: must be between 1 and \
             {MAX_REPLICAS}"
        )),
        _ => Ok(()),
    }
}

/// Whether `name` is a lowercase RFC 1123 subdomain, as Kubernetes names most objects.
fn is_dns_subdomain(name: &str) -> bool {
    let alphanumeric = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.len() <= 253
        && name.split('.').all(|label| {
            label.starts_with(alphanumeric)
                && label.ends_with(alphanumeric)
                && label.chars().all(|c| alphanumeric(c) || c == '-')
        })
}

/// The validating webhook: [`check_deployment`] on create and update, and the Deployment's
/// name fixed once set (renaming would orphan the old Deployment).
#[derive(Clone, Copy, Debug, Default)]
pub struct FooValidator;

impl Validator<Foo> for FooValidator {
    async fn validate_create(&self, foo: &Foo, _request: &AdmissionRequest) -> Validation {
        check_deployment(&foo.spec.deployment).map_err(Denial::new)?;
        Ok(Vec::new())
    }

    async fn validate_update(
        &self,
        old: &Foo,
        new: &Foo,
        _request: &AdmissionRequest,
    ) -> Validation {
        check_deployment(&new.spec.deployment).map_err(Denial::new)?;
        let (before, after) = (&old.spec.deployment.name, &new.spec.deployment.name);
        if before != after {
            return Err(Denial::new(format!(
                "spec.deployment.name: Invalid value: {after:?}: field is immutable (was {before:?})"
            )));
        }
        Ok(Vec::new())
    }
}

/// The defaulting webhook: `spec.deployment.replicas` set to [`DEFAULT_REPLICAS`] when absent.
#[derive(Clone, Copy, Debug, Default)]
pub struct FooDefaulter;

impl Defaulter<Foo> for FooDefaulter {
    async fn default(&self, foo: &mut Foo, _request: &AdmissionRequest) -> Result<(), Denial> {
        foo.spec.deployment.replicas.get_or_insert(DEFAULT_REPLICAS);
        Ok(())
    }
}
