//! The Service network the control plane is given: the flag's range and the `kubernetes`
//! Service's address in it, which the serving certificate names.

/// The Services' cluster IP range (required by kube-apiserver).
pub(crate) const SERVICE_RANGE: &str = "10.0.0.0/24";
/// The first address of [`SERVICE_RANGE`]: the `kubernetes` Service's, in the serving
/// certificate.
pub(crate) const SERVICE_IP: &str = "10.0.0.1";
