//! The webhook server: typed admission (validators, defaulters and their patches), raw
//! handlers, conversion, TLS and certificate rotation, robustness (panics, timeouts, bad
//! bodies), metrics and readiness through the manager.

mod admission;
mod chaos;
mod conversion;
mod manager;
mod review_bodies;
mod robustness;
pub mod support;
mod tls;
