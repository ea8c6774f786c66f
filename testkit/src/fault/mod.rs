//! The fault description a test gives its server, whichever server it is.
//!
//! - [`Fault`] and [`Effect`]: which requests and what happens to them. Every
//!   [`FailRule`](apiserver_sim::FailRule) the simulator takes converts into a [`Fault`] with
//!   the same selection (verb, resource, namespace, count, probability and seed) and a status
//!   [`Effect`]; the other effects are wire faults only the
//!   [`FaultProxy`](crate::proxy::FaultProxy) produces.
//! - [`InjectFaults`]: installing faults, the server-wide faults (dropped watches, restarts,
//!   compaction on demand) and the request record, implemented by the simulator's
//!   [`ApiServer`](apiserver_sim::ApiServer) and by the proxy.

mod description;
mod inject;

pub use description::{Effect, Fault};
pub use inject::{FaultError, InjectFaults};
