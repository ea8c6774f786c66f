//! What went through the proxy: requests per verb and resource, counted as the simulator
//! counts them, and the watch streams open now.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

/// Requests per resource (`<plural>` or `<plural>/<subresource>`) and verb, and open watches.
#[derive(Debug, Default)]
pub(crate) struct Counts {
    requests: Mutex<BTreeMap<String, BTreeMap<&'static str, u64>>>,
    open_watches: AtomicUsize,
}

impl Counts {
    /// Counts one request.
    pub fn record(&self, verb: &'static str, resource: String) {
        *self
            .requests
            .lock()
            .entry(resource)
            .or_default()
            .entry(verb)
            .or_default() += 1;
    }

    /// Requests counted for `verb` on `resource`.
    pub fn get(&self, verb: &str, resource: &str) -> u64 {
        self.requests
            .lock()
            .get(resource)
            .and_then(|verbs| {
                verbs
                    .iter()
                    .find(|(v, _)| v.eq_ignore_ascii_case(verb))
                    .map(|(_, n)| *n)
            })
            .unwrap_or(0)
    }

    /// Forgets every request count.
    pub fn reset(&self) {
        self.requests.lock().clear();
    }

    /// Every count: resource → verb → count.
    pub fn snapshot(&self) -> BTreeMap<String, BTreeMap<&'static str, u64>> {
        self.requests.lock().clone()
    }

    /// Watch streams open now.
    pub fn open_watches(&self) -> usize {
        self.open_watches.load(Ordering::SeqCst)
    }
}

/// One open watch stream, counted while it lives.
pub(crate) struct OpenWatch(Arc<Counts>);

impl OpenWatch {
    /// Counts a watch stream as open until the value is dropped.
    pub fn new(counts: Arc<Counts>) -> Self {
        counts.open_watches.fetch_add(1, Ordering::SeqCst);
        Self(counts)
    }
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        self.0.open_watches.fetch_sub(1, Ordering::SeqCst);
    }
}
