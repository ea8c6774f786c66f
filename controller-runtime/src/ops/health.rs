//! Health and readiness probes: named checks run on every `/healthz` or `/readyz` request (the
//! HTTP server that serves them with `/metrics` is in `server.rs`).
//!
//! `/healthz` (liveness) and `/readyz` (readiness) run named checks in the order they were
//! added and answer `200 ok` when all pass. When one fails, the body lists every check
//! (`[+]name ok` / `[-]name failed: reason`) and the status is `500 Internal Server Error` if a
//! user check failed, or `503 Service Unavailable` if only the manager's own readiness
//! conditions are unmet (caches not synced yet, leader elector not running). `/healthz/NAME`
//! and `/readyz/NAME` run one check. `?verbose` lists the checks on success too.

use std::fmt::Write as _;
use std::sync::Arc;

use http::StatusCode;
use parking_lot::Mutex;

/// A health or readiness check: `Ok(())` when healthy, otherwise the reason.
pub type Check = Arc<dyn Fn() -> Result<(), String> + Send + Sync>;

/// The always-passing check controller-runtime calls `ping`.
pub fn ping() -> Result<(), String> {
    Ok(())
}

struct NamedCheck {
    name: String,
    check: Check,
    /// The status when this check fails: 500 for user checks, 503 for built-in readiness.
    failure: StatusCode,
}

/// The manager's registered checks.
#[derive(Default)]
pub(crate) struct Probes {
    healthz: Mutex<Vec<NamedCheck>>,
    readyz: Mutex<Vec<NamedCheck>>,
}

/// Which probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Probe {
    Healthz,
    Readyz,
}

impl Probe {
    /// The probe's path, without the slash.
    pub(crate) fn path(self) -> &'static str {
        match self {
            Self::Healthz => "healthz",
            Self::Readyz => "readyz",
        }
    }
}

impl Probes {
    fn list(&self, probe: Probe) -> &Mutex<Vec<NamedCheck>> {
        match probe {
            Probe::Healthz => &self.healthz,
            Probe::Readyz => &self.readyz,
        }
    }

    /// Adds a check; fails if the name is taken for this probe.
    pub(crate) fn add(
        &self,
        probe: Probe,
        name: &str,
        check: Check,
        builtin: bool,
    ) -> Result<(), String> {
        let mut checks = self.list(probe).lock();
        if checks.iter().any(|existing| existing.name == name) {
            return Err(format!(
                "a {} check named `{name}` already exists",
                probe.path()
            ));
        }
        checks.push(NamedCheck {
            name: name.to_owned(),
            check,
            failure: if builtin {
                StatusCode::SERVICE_UNAVAILABLE
            } else {
                StatusCode::INTERNAL_SERVER_ERROR
            },
        });
        Ok(())
    }

    /// Runs the checks of `probe` (only `only`, if given): the status and the body.
    pub(crate) fn run(
        &self,
        probe: Probe,
        only: Option<&str>,
        verbose: bool,
    ) -> (StatusCode, String) {
        let checks: Vec<(String, Check, StatusCode)> = self
            .list(probe)
            .lock()
            .iter()
            .filter(|named| only.is_none_or(|only| named.name == only))
            .map(|named| (named.name.clone(), Arc::clone(&named.check), named.failure))
            .collect();
        if let Some(only) = only
            && checks.is_empty()
        {
            return (
                StatusCode::NOT_FOUND,
                format!("no {} check named `{only}`\n", probe.path()),
            );
        }
        let mut status = StatusCode::OK;
        let mut body = String::new();
        for (name, check, failure) in &checks {
            match check() {
                Ok(()) => {
                    let _ = writeln!(body, "[+]{name} ok");
                }
                Err(reason) => {
                    let _ = writeln!(body, "[-]{name} failed: {reason}");
                    if status != StatusCode::INTERNAL_SERVER_ERROR {
                        status = *failure;
                    }
                }
            }
        }
        if status == StatusCode::OK {
            if verbose {
                let _ = writeln!(body, "{} check passed", probe.path());
                (status, body)
            } else {
                (status, "ok".to_owned())
            }
        } else {
            let _ = writeln!(body, "{} check failed", probe.path());
            (status, body)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_failures_are_500_builtin_503() {
        let probes = Probes::default();
        probes
            .add(Probe::Readyz, "ping", Arc::new(ping), false)
            .unwrap();
        probes
            .add(
                Probe::Readyz,
                "caches",
                Arc::new(|| Err("not synced".into())),
                true,
            )
            .unwrap();
        let (status, body) = probes.run(Probe::Readyz, None, false);
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(body.contains("[-]caches failed: not synced"));
        probes
            .add(Probe::Readyz, "db", Arc::new(|| Err("down".into())), false)
            .unwrap();
        assert_eq!(
            probes.run(Probe::Readyz, None, false).0,
            StatusCode::INTERNAL_SERVER_ERROR
        );
        assert_eq!(
            probes.run(Probe::Readyz, Some("ping"), false).0,
            StatusCode::OK
        );
        assert_eq!(
            probes.run(Probe::Readyz, Some("nope"), false).0,
            StatusCode::NOT_FOUND
        );
        assert!(
            probes
                .add(Probe::Readyz, "ping", Arc::new(ping), false)
                .is_err()
        );
    }
}
