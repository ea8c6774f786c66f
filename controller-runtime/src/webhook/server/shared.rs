//! What the webhook server and its connections share: the settings, the routes, the
//! conversions, the metrics and whether it serves.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use parking_lot::RwLock;

use crate::webhook::admission::AdmissionHook;
use crate::webhook::config::WebhookServerConfig;
use crate::webhook::conversion::Registry;
use crate::webhook::server::metrics::WebhookMetrics;

/// What the server and its connections share.
pub(crate) struct Shared {
    pub(crate) config: WebhookServerConfig,
    pub(crate) routes: RwLock<HashMap<String, Route>>,
    pub(crate) conversions: RwLock<Registry>,
    pub(crate) metrics: WebhookMetrics,
    /// Set while the accept loop runs.
    pub(crate) serving: AtomicBool,
}

/// What a path serves.
#[derive(Clone)]
pub(crate) enum Route {
    /// An admission webhook.
    Admission(Arc<dyn AdmissionHook>),
    /// The conversion webhook of every registered kind.
    Conversion,
}
