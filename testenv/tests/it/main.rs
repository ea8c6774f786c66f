//! The test environment against its own simulator: CRDs from files, managers that fail or stop,
//! waits that time out, and webhooks routed to a manager's server.

mod crds;
mod managers;
mod webhooks;
