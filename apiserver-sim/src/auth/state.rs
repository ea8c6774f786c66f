//! The authentication and authorization state the server keeps: whether RBAC is on, the
//! tokens issued and the refusals recorded. Held by the shared server state, so it uses
//! nothing of the request handling (`gate` in this folder's `mod.rs` reads it from there).

use std::sync::Arc;

use super::denials::Denials;
use super::tokens::Tokens;

/// The server's authentication and authorization state.
#[derive(Debug, Default)]
pub(crate) struct Auth {
    /// Whether requests are authenticated and authorized (RBAC on).
    pub enabled: bool,
    /// Whether writes that change owner references are checked against the writer's
    /// permissions (`OwnerReferencesPermissionEnforcement`; only with RBAC on).
    pub owner_references_enforced: bool,
    /// The tokens issued.
    pub tokens: Tokens,
    /// Requests refused with 403 (shared with the writes that admission checks).
    pub denials: Arc<Denials>,
}

impl Auth {
    /// Authentication and authorization, on or off, and whether owner-reference changes are
    /// checked.
    pub fn new(enabled: bool, owner_references_enforced: bool) -> Self {
        Self {
            enabled,
            owner_references_enforced,
            ..Self::default()
        }
    }
}
