//! The test environment against its own simulator (or the server the environment variables
//! name): CRDs from files, managers that fail or stop, waits that time out, and webhooks routed
//! to a manager's server; and testenv's own control plane from the binaries
//! `KUBE_RT_TEST_ASSETS` names.

mod control_plane;
mod crds;
mod managers;
mod webhooks;
