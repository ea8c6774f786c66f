//! The reconcile counters of every controller (`controller_runtime_reconcile_total`,
//! `_reconcile_errors_total`, `_terminal_reconcile_errors_total`, `_reconcile_panics_total`,
//! `_reconcile_timeouts_total`, `_active_workers`), read from the controllers' own counters at
//! scrape time, with controller-runtime's names and labels; and the staleness series
//! (`controller_runtime_stale_sync_skips_total`: reconciles skipped for a cache older than the
//! controller's own write, as Kubernetes 1.36's controllers skip them, and
//! `controller_runtime_stale_informer_lag`: how far each informer is behind such a write).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;

use crate::ops::metrics::const_series::{counter, gauge};
use crate::ops::metrics::families::{Labels, labels};
use crate::ops::metrics::reconciles::ControllerSet;

/// Reads every controller's counts at scrape time.
pub(super) struct ControllerCollector(pub(super) ControllerSet);

impl std::fmt::Debug for ControllerCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("ControllerCollector").finish()
    }
}

impl Collector for ControllerCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let controllers = self.0.snapshot();
        let mut results: Vec<(Labels, u64)> = Vec::new();
        let (mut errors, mut terminal, mut panics, mut timeouts, mut active) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut skips, mut lags) = (Vec::new(), Vec::new());
        for snapshot in &controllers {
            let (name, counts) = (&snapshot.name, &snapshot.counts);
            for (informer, lag) in &snapshot.lag {
                lags.push((
                    labels(&[("controller", name), ("informer", informer)]),
                    i64::try_from(*lag).unwrap_or(i64::MAX),
                ));
            }
            // controller-runtime counts a terminal error as `result="error"` and as an error.
            let failed = counts.errors + counts.terminal;
            for (result, value) in [
                ("success", counts.success),
                ("error", failed),
                ("requeue", counts.requeue),
                ("requeue_after", counts.requeue_after),
            ] {
                results.push((labels(&[("controller", name), ("result", result)]), value));
            }
            let controller = labels(&[("controller", name)]);
            errors.push((controller.clone(), failed));
            terminal.push((controller.clone(), counts.terminal));
            panics.push((controller.clone(), counts.panics));
            timeouts.push((controller.clone(), counts.timeouts));
            skips.push((controller.clone(), counts.stale_skips));
            active.push((controller, counts.active_workers as i64));
        }
        counter(
            &mut encoder,
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            &results,
        )?;
        counter(
            &mut encoder,
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            &errors,
        )?;
        counter(
            &mut encoder,
            "controller_runtime_terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            &terminal,
        )?;
        counter(
            &mut encoder,
            "controller_runtime_reconcile_panics",
            "Total number of reconciliation panics per controller",
            &panics,
        )?;
        counter(
            &mut encoder,
            "controller_runtime_reconcile_timeouts",
            "Total number of reconciliation timeouts per controller",
            &timeouts,
        )?;
        gauge(
            &mut encoder,
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            &active,
        )?;
        counter(
            &mut encoder,
            "controller_runtime_stale_sync_skips",
            "Reconciles skipped (and requeued) because an informer's cache had not caught up with the controller's own writes",
            &skips,
        )?;
        gauge(
            &mut encoder,
            "controller_runtime_stale_informer_lag",
            "Resource versions each informer's cache is behind the newest write of the controller through it that a reconcile waits for (0 when caught up)",
            &lags,
        )
    }
}
