//! The authentication and authorization state the server keeps: whether RBAC is on, the
//! tokens issued and the refusals recorded. Held by the shared server state, so it uses
//! nothing of the request handling (`gate` in this folder's `mod.rs` reads it from there).

use super::denials::Denials;
use super::tokens::Tokens;

/// The server's authentication and authorization state.
#[derive(Debug, Default)]
pub(crate) struct Auth {
    /// Whether requests are authenticated and authorized (RBAC on).
    pub enabled: bool,
    /// The tokens issued.
    pub tokens: Tokens,
    /// Requests refused with 403.
    pub denials: Denials,
}

impl Auth {
    /// Authentication and authorization, on or off.
    pub fn new(enabled: bool) -> Self {
        Self {
            enabled,
            ..Self::default()
        }
    }
}
