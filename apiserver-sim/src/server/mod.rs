//! The public handle, [`ApiServer`](handle::ApiServer): start, connect, seed, inspect, inject
//! faults, shut down.
//!
//! - [`handle`]: [`ApiServerBuilder`](handle::ApiServerBuilder) and
//!   [`ApiServer`](handle::ApiServer): options, start (the tasks the server runs), address,
//!   client, kubeconfig, shutdown;
//! - [`seed`]: objects written straight into the store;
//! - [`crds`]: a CRD created and established in one call;
//! - [`inspect`]: the server's own view of its objects, watches and request counts;
//! - [`hooks`]: fault and test hooks.

pub(crate) mod crds;
pub(crate) mod handle;
pub(crate) mod hooks;
pub(crate) mod inspect;
pub(crate) mod seed;
