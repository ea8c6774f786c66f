//! [`Event`]: one change of an informer's cache as the informer hands it to a handler, carrying
//! what the informer already worked out (the object's key, whether an update is a resync).

use std::sync::Arc;

use deltafifo::DeletedObject;
use indexer::ObjectKey;

/// One change of an informer's cache, told to a handler through
/// [`ResourceEventHandler::on_event`](crate::ResourceEventHandler::on_event).
///
/// It carries what the informer computed on the way, so a handler needs to compute none of it
/// again: the object's [`key`](Self::key) (computed once, when the change reached the informer's
/// fifo) and, for an update, whether it is a [resync](Change::Updated::resync).
#[derive(Debug)]
pub struct Event<K> {
    /// The key of the object that changed.
    pub key: ObjectKey,
    /// What happened to it.
    pub change: Change<K>,
}

/// What happened to the object of an [`Event`].
#[derive(Debug)]
pub enum Change<K> {
    /// The object appeared in the cache.
    Added {
        /// The object as cached.
        object: Arc<K>,
        /// Whether it belongs to the informer's initial list (or, for a handler added to a
        /// running informer, to the cache snapshot the handler starts with).
        in_initial_list: bool,
    },
    /// The cached object changed from `old` to `new`.
    Updated {
        /// The object the cache held before.
        old: Arc<K>,
        /// The object the cache holds now.
        new: Arc<K>,
        /// Whether both have the same `resourceVersion`: nothing changed on the server, the
        /// object was re-delivered by a resync or found unchanged by a relist. Such updates reach
        /// only the handlers whose resync is due.
        resync: bool,
    },
    /// The object left the cache: its last state, or a tombstone for a deletion missed while the
    /// watch was down.
    Deleted(DeletedObject<K>),
}

impl<K> Event<K> {
    /// An add of `object` under `key`.
    pub fn added(key: ObjectKey, object: Arc<K>, in_initial_list: bool) -> Self {
        Self {
            key,
            change: Change::Added {
                object,
                in_initial_list,
            },
        }
    }

    /// An update of the object under `key` from `old` to `new`; `resync` when nothing changed
    /// on the server (see [`Change::Updated`]).
    pub fn updated(key: ObjectKey, old: Arc<K>, new: Arc<K>, resync: bool) -> Self {
        Self {
            key,
            change: Change::Updated { old, new, resync },
        }
    }

    /// A deletion of the object under `key`.
    pub fn deleted(key: ObjectKey, deleted: DeletedObject<K>) -> Self {
        Self {
            key,
            change: Change::Deleted(deleted),
        }
    }

    /// Whether this is an update that changed nothing on the server (a resync).
    pub fn is_resync(&self) -> bool {
        matches!(self.change, Change::Updated { resync: true, .. })
    }

    /// Whether this is an add of the initial list.
    pub fn is_initial_add(&self) -> bool {
        matches!(
            self.change,
            Change::Added {
                in_initial_list: true,
                ..
            }
        )
    }

    /// The object's newest known state: the added or updated object, or the last state of a
    /// deleted one (`None` for a tombstone that lost it).
    pub fn object(&self) -> Option<&Arc<K>> {
        match &self.change {
            Change::Added { object, .. } => Some(object),
            Change::Updated { new, .. } => Some(new),
            Change::Deleted(deleted) => deleted.object(),
        }
    }
}

impl<K> Clone for Event<K> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            change: self.change.clone(),
        }
    }
}

impl<K> Clone for Change<K> {
    fn clone(&self) -> Self {
        match self {
            Change::Added {
                object,
                in_initial_list,
            } => Change::Added {
                object: Arc::clone(object),
                in_initial_list: *in_initial_list,
            },
            Change::Updated { old, new, resync } => Change::Updated {
                old: Arc::clone(old),
                new: Arc::clone(new),
                resync: *resync,
            },
            Change::Deleted(deleted) => Change::Deleted(deleted.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::ConfigMap;
    use parking_lot::Mutex;

    use super::*;
    use crate::FifoKind;
    use crate::ResourceEventHandler;
    use crate::testing::on_both_fifos;
    use crate::testing::{Harness, cm, eventually};

    /// Records every event it is told, as is.
    #[derive(Clone, Default)]
    struct Events(Arc<Mutex<Vec<Event<ConfigMap>>>>);

    impl ResourceEventHandler<ConfigMap> for Events {
        async fn on_event(&self, event: Event<ConfigMap>) {
            self.0.lock().push(event);
        }
    }

    /// What an event says, in a form the test compares: key, kind, resource versions, flag.
    fn summary(event: &Event<ConfigMap>) -> String {
        let rv = |obj: &ConfigMap| obj.metadata.resource_version.clone().unwrap_or_default();
        match &event.change {
            Change::Added {
                object,
                in_initial_list,
            } => format!(
                "{} added {} initial={in_initial_list}",
                event.key,
                rv(object)
            ),
            Change::Updated { old, new, resync } => {
                format!(
                    "{} updated {}->{} resync={resync}",
                    event.key,
                    rv(old),
                    rv(new)
                )
            }
            Change::Deleted(deleted) => format!(
                "{} deleted {:?} tombstone={}",
                event.key,
                deleted.object().map(|obj| rv(obj)),
                deleted.is_tombstone()
            ),
        }
    }

    /// The events carry the fifo's key (the add's is the very buffer the cache keeps, not a key
    /// computed again) and the resync decision the informer made once.
    async fn events_carry_the_fifos_key_and_the_resync_decision(kind: FifoKind) {
        // Longer than a key's inline capacity, so a key computed again would have a buffer of
        // its own.
        let long = "a-config-map-with-a-long-name";
        let mut h = Harness::new(kind, Duration::from_secs(1));
        let events = Events::default();
        h.processor
            .add(events.clone(), Duration::from_secs(1), Vec::new)
            .unwrap();
        h.start();
        h.fifo
            .replace(vec![cm(long, "1"), cm("b", "1")], "1".into())
            .unwrap();
        eventually("the list", || events.0.lock().len() == 2).await;
        let cached_key = h
            .cache
            .list_keys()
            .into_iter()
            .find(|key| key.name() == long)
            .unwrap();
        assert!(events.0.lock()[0].key.shares_text(&cached_key));
        h.fifo.update(cm(long, "2")).unwrap();
        eventually("the update", || events.0.lock().len() == 3).await;

        // A resync: old and new are the cached object, flagged as a resync.
        tokio::time::advance(Duration::from_secs(1)).await;
        h.resync();
        eventually("the resync", || events.0.lock().len() == 5).await;
        // A relist without `b`: an unchanged object (a resync too), then b's tombstone.
        h.fifo.replace(vec![cm(long, "2")], "3".into()).unwrap();
        eventually("the relist", || events.0.lock().len() == 7).await;
        h.fifo.delete(cm(long, "4")).unwrap();
        eventually("the delete", || events.0.lock().len() == 8).await;

        let mut seen: Vec<String> = events.0.lock().iter().map(summary).collect();
        // The resync's order among keys is the cache's, and a relist's tombstones come first
        // from an in-order fifo, last from a delta fifo.
        seen[3..5].sort();
        seen[5..7].sort();
        let long_key = format!("default/{long}");
        assert_eq!(
            seen,
            [
                format!("{long_key} added 1 initial=true"),
                "default/b added 1 initial=true".to_owned(),
                format!("{long_key} updated 1->2 resync=false"),
                format!("{long_key} updated 2->2 resync=true"),
                "default/b updated 1->1 resync=true".to_owned(),
                format!("{long_key} updated 2->2 resync=true"),
                "default/b deleted Some(\"1\") tombstone=true".to_owned(),
                format!("{long_key} deleted Some(\"4\") tombstone=false"),
            ]
        );
        h.stop().await;
    }

    on_both_fifos!(
        events_carry_the_fifos_key_and_the_resync_decision,
        start_paused = true
    );

    #[test]
    fn an_event_says_what_it_is() {
        let key: ObjectKey = "default/a".parse().unwrap();
        let (one, two) = (cm("a", "1"), cm("a", "2"));
        let added = Event::added(key.clone(), Arc::clone(&one), true);
        assert!(added.is_initial_add() && !added.is_resync());
        assert_eq!(added.object(), Some(&one));
        let resync = Event::updated(key.clone(), Arc::clone(&one), Arc::clone(&one), true);
        assert!(resync.is_resync() && !resync.is_initial_add());
        let update = Event::updated(key.clone(), one, Arc::clone(&two), false);
        assert!(!update.is_resync());
        assert_eq!(update.object(), Some(&two));
        let tombstone = Event::<ConfigMap>::deleted(
            key.clone(),
            DeletedObject::Unknown(Box::new(crate::DeletedFinalStateUnknown { key, obj: None })),
        );
        assert_eq!(tombstone.object(), None);
        assert_eq!(
            summary(&tombstone.clone()),
            "default/a deleted None tombstone=true"
        );
    }
}
