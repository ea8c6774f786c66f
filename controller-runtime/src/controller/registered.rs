//! [`Registered`]: the event handlers a controller added to one kind's informers — what its
//! workers wait on before starting, what removing the controller takes away again, and the
//! informers themselves, as staleness reads them and as a warm-up starts them.

use std::sync::Arc;

use informer::{Object, Registration, SharedIndexInformer};

use crate::cache::{Informers, KindCache, KindKey};
use crate::controller::error::Error;
use crate::controller::handlers::{AddHandler, compact_parts, typed_as_is};
use crate::controller::staleness::WatchedInformer;
use crate::controller::warm_up::InformerStart;

/// The handlers one watch added, one per informer of the watched kind.
pub(crate) struct Registered {
    /// Each handler's registration, named by its informer (for sync reports).
    pub(crate) registrations: Vec<(String, Registration)>,
    /// Each handler's removal from its informer.
    pub(crate) removals: Vec<Box<dyn FnOnce() + Send>>,
    /// The watched kind.
    pub(crate) kind: KindKey,
    /// The informers, for staleness.
    pub(crate) watched: Vec<WatchedInformer>,
    /// Each informer's start, for a warm-up.
    pub(crate) starts: Vec<InformerStart>,
}

impl Registered {
    /// Adds `handler` to every informer of `cache` (the cache of `kind`), whatever its
    /// storage; if one fails, removes those already added.
    pub(crate) fn on_cache<K: Object>(
        kind: KindKey,
        cache: &KindCache<K>,
        handler: &impl AddHandler<K>,
    ) -> Result<Self, Error> {
        let namespaces = cache.namespaces();
        match cache.storage() {
            Informers::Typed(informers) => Self::on(kind, namespaces, informers, |informer| {
                handler.add(informer, typed_as_is())
            }),
            Informers::Compact(informers) => {
                let (informers, decode) = compact_parts(informers);
                Self::on(kind, namespaces, &informers, |informer| {
                    handler.add(informer, Arc::clone(&decode))
                })
            }
        }
    }

    /// Adds a handler to every informer of a cache of `kind` (`informers`, one per namespace
    /// of `namespaces`, or one for all) with `register`; if one fails, removes those already
    /// added. The informers hold the kind's objects in the cache's storage (`K`, or
    /// `Compact<K>`).
    fn on<S: Object>(
        kind: KindKey,
        namespaces: Option<Vec<String>>,
        informers: &[Arc<SharedIndexInformer<S>>],
        mut register: impl FnMut(&SharedIndexInformer<S>) -> Result<Registration, Error>,
    ) -> Result<Self, Error> {
        let mut registered = Self {
            registrations: Vec::new(),
            removals: Vec::new(),
            kind,
            watched: Vec::new(),
            starts: Vec::new(),
        };
        for (index, informer) in informers.iter().enumerate() {
            let registration = match register(informer) {
                Ok(registration) => registration,
                Err(error) => {
                    // None of the watch's handlers stays when one could not be added.
                    for removal in registered.removals {
                        removal();
                    }
                    return Err(error);
                }
            };
            registered
                .registrations
                .push((informer.name().to_owned(), registration.clone()));
            registered.watched.push(WatchedInformer {
                kind: registered.kind.clone(),
                name: informer.name().to_owned(),
                namespace: namespaces
                    .as_ref()
                    .and_then(|namespaces| namespaces.get(index).cloned()),
                version: Box::new({
                    let informer = Arc::clone(informer);
                    move || informer.last_store_sync_resource_version()
                }),
            });
            registered.starts.push(InformerStart::of(informer));
            let informer = Arc::clone(informer);
            registered.removals.push(Box::new(move || {
                if let Err(error) = informer.remove_event_handler(&registration) {
                    tracing::warn!(%error, "could not remove an event handler");
                }
            }));
        }
        Ok(registered)
    }
}
