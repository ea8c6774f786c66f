//! [`ChaosConfig`]: what turns chaos mode on, with which profile and seed.

use super::profile::ChaosProfile;

/// Chaos mode settings: which [`ChaosProfile`], and the seed of every random draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChaosConfig {
    /// Seed of the timeline and of the per-request draws.
    pub seed: u64,
    /// How often each fault happens.
    pub profile: ChaosProfile,
}
