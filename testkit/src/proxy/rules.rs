//! [`RuleBook`]: the proxy's pending faults, used up and drawn exactly as the simulator uses up
//! and draws its failure rules (same order, same counted uses, same seeded sequence), so a
//! test's faults hit the same requests behind the proxy as on the simulator.

use crate::fault::{Effect, Fault, FaultError};

/// SplitMix64, the simulator's generator for random rules: the same seed gives the same
/// draws.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A fault with its random state.
#[derive(Debug)]
struct Pending {
    fault: Fault,
    rng: u64,
}

impl Pending {
    /// Whether the fault applies to this request (one draw of a random fault).
    fn fires(&mut self) -> bool {
        match self.fault.probability {
            Some(p) => {
                // 53 random bits: uniform in [0, 1).
                let x = (splitmix64(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64;
                x < p
            }
            None => true,
        }
    }
}

/// The pending faults, in the order they were added.
#[derive(Debug, Default)]
pub(crate) struct RuleBook {
    pending: Vec<Pending>,
}

impl RuleBook {
    /// Adds a fault (a counted fault with count 0 is a no-op); an invalid one is refused.
    pub fn add(&mut self, fault: Fault) -> Result<(), FaultError> {
        fault.validate().map_err(FaultError::Invalid)?;
        if fault.probability.is_some() || fault.count > 0 {
            let rng = fault.seed.unwrap_or(0);
            self.pending.push(Pending { fault, rng });
        }
        Ok(())
    }

    /// Removes every fault.
    pub fn clear(&mut self) {
        self.pending.clear();
    }

    /// The pending faults (counted ones with their remaining count).
    pub fn faults(&self) -> Vec<Fault> {
        self.pending.iter().map(|p| p.fault.clone()).collect()
    }

    /// The effect for a `verb` request on `resource` addressed to `namespace`, using up one
    /// use of the first fault that selects it and fires.
    pub fn take(&mut self, verb: &str, resource: &str, namespace: Option<&str>) -> Option<Effect> {
        let i = self
            .pending
            .iter_mut()
            .position(|p| p.fault.selects(verb, resource, namespace) && p.fires())?;
        let fault = &mut self.pending[i].fault;
        let effect = fault.effect;
        if fault.probability.is_none() {
            fault.count -= 1;
            if fault.count == 0 {
                self.pending.remove(i);
            }
        }
        Some(effect)
    }
}

#[cfg(test)]
mod tests {
    use apiserver_sim::FailRule;

    use super::*;

    fn status(code: u16) -> Option<Effect> {
        Some(Effect::Status {
            code,
            retry_after_seconds: None,
            in_band: false,
        })
    }

    #[test]
    fn counted_faults_are_used_up_in_order() {
        let mut book = RuleBook::default();
        book.add(FailRule::new("list", "pods", 500, 2).into())
            .unwrap();
        book.add(FailRule::new("list", "pods", 503, 1).into())
            .unwrap();
        book.add(FailRule::new("list", "pods", 429, 0).into())
            .unwrap();
        assert_eq!(book.take("get", "pods", None), None);
        assert_eq!(book.take("list", "pods", None), status(500));
        assert_eq!(book.take("list", "pods", None), status(500));
        assert_eq!(book.take("list", "pods", None), status(503));
        assert_eq!(book.take("list", "pods", None), None);
        assert!(book.faults().is_empty());
    }

    /// Which of `n` selected requests a random fault with `seed` and `p` hits.
    fn draws(seed: u64, p: f64, n: usize) -> Vec<bool> {
        let mut book = RuleBook::default();
        book.add(FailRule::random("list", "pods", 500, p, seed).into())
            .unwrap();
        (0..n)
            .map(|_| book.take("list", "pods", None).is_some())
            .collect()
    }

    #[test]
    fn random_faults_are_deterministic_per_seed() {
        let a = draws(7, 0.3, 10_000);
        assert_eq!(a, draws(7, 0.3, 10_000));
        assert_ne!(a, draws(8, 0.3, 10_000));
        let hits = a.iter().filter(|d| **d).count();
        assert!((2_700..3_300).contains(&hits), "{hits}");
        assert!(draws(1, 0.0, 100).iter().all(|d| !d));
        assert!(draws(1, 1.0, 100).iter().all(|d| *d));
    }

    #[test]
    fn a_random_fault_that_does_not_fire_lets_the_next_one_try() {
        let mut book = RuleBook::default();
        book.add(FailRule::random("get", "pods", 500, 0.0, 1).into())
            .unwrap();
        book.add(FailRule::new("get", "pods", 403, 1).into())
            .unwrap();
        assert_eq!(book.take("get", "pods", None), status(403));
        assert_eq!(book.take("get", "pods", None), None);
        assert_eq!(book.faults().len(), 1);
        assert!(
            book.add(FailRule::random("*", "*", 500, 2.0, 1).into())
                .is_err()
        );
    }
}
