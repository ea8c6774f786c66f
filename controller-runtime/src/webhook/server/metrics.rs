//! The webhook server's metrics, with controller-runtime's names and labels:
//! `controller_runtime_webhook_requests_total{webhook,code}` (by HTTP status),
//! `controller_runtime_webhook_latency_seconds{webhook}`,
//! `controller_runtime_webhook_requests_in_flight{webhook}` (the label is the path), and
//! `controller_runtime_webhook_panics_total` / `controller_runtime_conversion_webhook_panics_total`.
//! Registered in the manager's registry; a standalone server records them unexported. Without
//! the `metrics` feature they record nothing.

#[cfg(feature = "metrics")]
pub(crate) use prometheus_metrics::WebhookMetrics;

#[cfg(not(feature = "metrics"))]
pub(crate) use noop::WebhookMetrics;

/// Keeps a path's in-flight gauge raised while alive.
pub(crate) struct InFlight {
    #[cfg(feature = "metrics")]
    gauge: prometheus_client::metrics::gauge::Gauge,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        #[cfg(feature = "metrics")]
        self.gauge.dec();
    }
}

#[cfg(feature = "metrics")]
mod prometheus_metrics {
    use std::time::Duration;

    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    use prometheus_client::metrics::gauge::Gauge;
    use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};

    use super::InFlight;
    use crate::ops::metrics::Metrics;

    type Labels = Vec<(String, String)>;

    /// controller-runtime's latency buckets: 10 ns × 10^k for k in 0..12.
    fn latency_histogram() -> Histogram {
        Histogram::new(exponential_buckets(10e-9, 10.0, 12))
    }

    fn labels(pairs: &[(&str, &str)]) -> Labels {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
            .collect()
    }

    /// The families of the webhook server.
    #[derive(Clone)]
    pub(crate) struct WebhookMetrics {
        requests: Family<Labels, Counter>,
        latency: Family<Labels, Histogram, fn() -> Histogram>,
        in_flight: Family<Labels, Gauge>,
        panics: Counter,
        conversion_panics: Counter,
    }

    impl WebhookMetrics {
        /// The families, registered in `metrics` when given.
        pub(crate) fn new(metrics: Option<&Metrics>) -> Self {
            let this = Self {
                requests: Family::default(),
                latency: Family::new_with_constructor(latency_histogram),
                in_flight: Family::default(),
                panics: Counter::default(),
                conversion_panics: Counter::default(),
            };
            if let Some(metrics) = metrics {
                // Counters are registered without `_total`: the encoder appends it.
                metrics.with_registry(|registry| {
                    registry.register(
                        "controller_runtime_webhook_requests",
                        "Total number of admission requests by HTTP status code.",
                        this.requests.clone(),
                    );
                    registry.register(
                        "controller_runtime_webhook_latency_seconds",
                        "Histogram of the latency of processing admission requests",
                        this.latency.clone(),
                    );
                    registry.register(
                        "controller_runtime_webhook_requests_in_flight",
                        "Current number of admission requests being served.",
                        this.in_flight.clone(),
                    );
                    registry.register(
                        "controller_runtime_webhook_panics",
                        "Total number of webhook panics",
                        this.panics.clone(),
                    );
                    registry.register(
                        "controller_runtime_conversion_webhook_panics",
                        "Total number of conversion webhook panics",
                        this.conversion_panics.clone(),
                    );
                });
            }
            this
        }

        /// Creates the series of a newly registered path, with the codes 200 and 500 at zero
        /// as controller-runtime initialises them.
        pub(crate) fn path_registered(&self, path: &str) {
            for code in ["200", "500"] {
                self.requests
                    .get_or_create_owned(&labels(&[("webhook", path), ("code", code)]));
            }
            self.in_flight
                .get_or_create_owned(&labels(&[("webhook", path)]));
        }

        /// A request to `path` started; it is in flight until the guard drops.
        pub(crate) fn started(&self, path: &str) -> InFlight {
            let gauge = self
                .in_flight
                .get_or_create_owned(&labels(&[("webhook", path)]));
            gauge.inc();
            InFlight { gauge }
        }

        /// A request to `path` was answered with `code` after `took`.
        pub(crate) fn answered(&self, path: &str, code: u16, took: Duration) {
            self.requests
                .get_or_create(&labels(&[("webhook", path), ("code", &code.to_string())]))
                .inc();
            self.latency
                .get_or_create(&labels(&[("webhook", path)]))
                .observe(took.as_secs_f64());
        }

        /// An admission handler panicked.
        pub(crate) fn panicked(&self) {
            self.panics.inc();
        }

        /// A conversion panicked.
        pub(crate) fn conversion_panicked(&self) {
            self.conversion_panics.inc();
        }
    }
}

#[cfg(not(feature = "metrics"))]
mod noop {
    use std::time::Duration;

    use super::InFlight;
    use crate::ops::metrics::Metrics;

    /// Records nothing without the `metrics` feature.
    #[derive(Clone)]
    pub(crate) struct WebhookMetrics;

    impl WebhookMetrics {
        pub(crate) fn new(_metrics: Option<&Metrics>) -> Self {
            Self
        }
        pub(crate) fn path_registered(&self, _path: &str) {}
        pub(crate) fn started(&self, _path: &str) -> InFlight {
            InFlight {}
        }
        pub(crate) fn answered(&self, _path: &str, _code: u16, _took: Duration) {}
        pub(crate) fn panicked(&self) {}
        pub(crate) fn conversion_panicked(&self) {}
    }
}
