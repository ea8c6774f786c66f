//! testenv's own control plane from the binaries `KUBE_RT_TEST_ASSETS` names (skipped with a
//! notice without it): a real API server with the environment's credentials and RBAC, shared by
//! the environments of a process, a controller-manager on request, and no process or file left
//! when it stops or the test process is killed.

mod api;
mod controller_manager;
mod lifetime;
mod processes;
