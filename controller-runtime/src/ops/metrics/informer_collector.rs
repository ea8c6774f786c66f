//! The informer metrics (`controller_runtime_informer_*`), read from every informer the manager
//! handed out at scrape time.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::DescriptorEncoder;

use crate::ops::metrics::const_series::{counter, gauge};
use crate::ops::metrics::families::labels;
use crate::ops::metrics::informers::InformerSet;

/// Reads the informers at scrape time (beyond controller-runtime, after its issue #3182).
pub(super) struct InformerCollector(pub(super) InformerSet);

impl std::fmt::Debug for InformerCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("InformerCollector").finish()
    }
}

impl Collector for InformerCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let informers = self.0.snapshot();
        let mut objects = Vec::new();
        let mut buffers = Vec::new();
        let mut versions = Vec::new();
        let mut store_versions = Vec::new();
        let mut lists = Vec::new();
        let mut watches = Vec::new();
        for informer in &informers {
            let name = informer.name();
            let set = labels(&[("informer", name)]);
            objects.push((set.clone(), informer.cache_size() as i64));
            for buffer in informer.listener_buffers() {
                buffers.push((
                    labels(&[("informer", name), ("handler", &buffer.handler)]),
                    buffer.len as i64,
                ));
            }
            if let Ok(version) = informer.last_sync_resource_version().parse::<u64>() {
                versions.push((set.clone(), version as f64));
            }
            if let Ok(version) = informer.last_store_sync_resource_version().parse::<u64>() {
                store_versions.push((set.clone(), version as f64));
            }
            lists.push((set.clone(), informer.lists()));
            watches.push((set, informer.watches()));
        }
        gauge(
            &mut encoder,
            "controller_runtime_informer_cache_objects",
            "Number of objects in the informer's cache",
            &objects,
        )?;
        gauge(
            &mut encoder,
            "controller_runtime_informer_listener_buffer_length",
            "Notifications waiting in each event handler's buffer",
            &buffers,
        )?;
        gauge(
            &mut encoder,
            "controller_runtime_informer_last_sync_resource_version",
            "resourceVersion of the last list or watch event the informer processed (only when numeric)",
            &versions,
        )?;
        gauge(
            &mut encoder,
            "controller_runtime_informer_store_resource_version",
            "resourceVersion the informer's cache reflects, watch bookmarks included (client-go's store_resource_version; only when numeric)",
            &store_versions,
        )?;
        counter(
            &mut encoder,
            "controller_runtime_informer_lists",
            "List requests made by the informer's reflector",
            &lists,
        )?;
        counter(
            &mut encoder,
            "controller_runtime_informer_watches",
            "Watch requests made by the informer's reflector",
            &watches,
        )?;
        Ok(())
    }
}
