//! [`FilteringHandler`]: a handler that passes on only what concerns the objects a filter
//! accepts (client-go's `FilteringResourceEventHandler`).

use std::fmt;
use std::sync::Arc;

use crate::event::{Change, Event};
use crate::handler::{DeletedObject, ResourceEventHandler, dispatch};

/// Passes to `inner` only what concerns objects that `filter` accepts (client-go's
/// `FilteringResourceEventHandler`).
///
/// Adds and deletes pass when the object passes. An update is mapped by which side passes:
/// both → update; only the new object → add (`is_in_initial_list = false`); only the old object
/// → delete of the old object; neither → nothing. A tombstone is filtered on its last known
/// state; a tombstone without one always passes (there is nothing to judge it by). Events keep
/// their key and resync flag through the filter and reach the inner handler's
/// [`on_event`](ResourceEventHandler::on_event).
pub struct FilteringHandler<F, H> {
    filter: F,
    inner: H,
}

impl<F, H> FilteringHandler<F, H> {
    /// Wraps `inner` behind `filter`.
    pub fn new(filter: F, inner: H) -> Self {
        Self { filter, inner }
    }

    /// What `change` becomes for the inner handler, if anything (see the type's rules).
    fn pass<K>(&self, change: Change<K>) -> Option<Change<K>>
    where
        F: Fn(&K) -> bool,
    {
        let filter = &self.filter;
        match change {
            Change::Added { ref object, .. } => filter(object).then_some(change),
            Change::Updated { old, new, resync } => match (filter(&old), filter(&new)) {
                (true, true) => Some(Change::Updated { old, new, resync }),
                (false, true) => Some(Change::Added {
                    object: new,
                    in_initial_list: false,
                }),
                (true, false) => Some(Change::Deleted(DeletedObject::Known(old))),
                (false, false) => None,
            },
            Change::Deleted(deleted) => deleted
                .object()
                .is_none_or(|last| filter(last))
                .then_some(Change::Deleted(deleted)),
        }
    }
}

impl<F, H: fmt::Debug> fmt::Debug for FilteringHandler<F, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteringHandler")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

impl<K, F, H> ResourceEventHandler<K> for FilteringHandler<F, H>
where
    K: Send + Sync + 'static,
    F: Fn(&K) -> bool + Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    async fn on_event(&self, event: Event<K>) {
        let Event { key, change } = event;
        if let Some(change) = self.pass(change) {
            self.inner.on_event(Event { key, change }).await;
        }
    }

    async fn on_add(&self, object: Arc<K>, in_initial_list: bool) {
        let change = Change::Added {
            object,
            in_initial_list,
        };
        if let Some(change) = self.pass(change) {
            dispatch(&self.inner, change).await;
        }
    }

    async fn on_update(&self, old: Arc<K>, new: Arc<K>) {
        let change = Change::Updated {
            old,
            new,
            resync: false,
        };
        if let Some(change) = self.pass(change) {
            dispatch(&self.inner, change).await;
        }
    }

    async fn on_delete(&self, deleted: DeletedObject<K>) {
        if let Some(change) = self.pass(Change::Deleted(deleted)) {
            dispatch(&self.inner, change).await;
        }
    }

    fn name(&self) -> &str {
        self.inner.name()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use indexer::ObjectKey;
    use k8s_openapi::api::core::v1::ConfigMap;
    use parking_lot::Mutex;

    use super::*;
    use crate::DeletedFinalStateUnknown;
    use crate::testing::{Event as Recorded, Recorder, cm};

    fn kept(obj: &ConfigMap) -> bool {
        obj.metadata
            .name
            .as_deref()
            .is_some_and(|n| n.starts_with("keep"))
    }

    #[tokio::test]
    async fn filtering_maps_updates_by_which_side_passes() {
        let inner = Recorder::new("inner");
        let filtered = FilteringHandler::new(kept, inner.clone());
        filtered.on_add(cm("keep-a", "1"), true).await;
        filtered.on_add(cm("drop-a", "1"), true).await;
        // Both pass: an update. Only the new one: an add. Only the old one: a delete. Neither: nothing.
        filtered
            .on_update(cm("keep-a", "1"), cm("keep-a", "2"))
            .await;
        filtered
            .on_update(cm("drop-b", "1"), cm("keep-b", "2"))
            .await;
        filtered
            .on_update(cm("keep-c", "1"), cm("drop-c", "2"))
            .await;
        filtered
            .on_update(cm("drop-d", "1"), cm("drop-d", "2"))
            .await;
        filtered
            .on_delete(DeletedObject::Known(cm("drop-e", "1")))
            .await;
        filtered
            .on_delete(DeletedObject::Known(cm("keep-e", "1")))
            .await;
        let key: indexer::ObjectKey = "default/x".parse().unwrap();
        let bare = DeletedFinalStateUnknown { key, obj: None };
        filtered
            .on_delete(DeletedObject::Unknown(Box::new(bare)))
            .await;
        assert_eq!(
            inner.events(),
            vec![
                Recorded::Add("keep-a".into(), "1".into(), true),
                Recorded::Update("keep-a".into(), "1".into(), "2".into(), false),
                Recorded::Add("keep-b".into(), "2".into(), false),
                Recorded::Delete("keep-c".into(), Some("1".into()), false),
                Recorded::Delete("keep-e".into(), Some("1".into()), false),
                Recorded::Delete("x".into(), None, true),
            ]
        );
        assert_eq!(ResourceEventHandler::<ConfigMap>::name(&filtered), "inner");
    }

    /// Hears only events, and records each as its key, kind and flag.
    #[derive(Clone, Default)]
    struct Keys(Arc<Mutex<Vec<String>>>);

    impl ResourceEventHandler<ConfigMap> for Keys {
        async fn on_event(&self, event: Event<ConfigMap>) {
            let what = match &event.change {
                Change::Added {
                    in_initial_list, ..
                } => format!("added initial={in_initial_list}"),
                Change::Updated { resync, .. } => format!("updated resync={resync}"),
                Change::Deleted(_) => "deleted".to_owned(),
            };
            self.0.lock().push(format!("{} {what}", event.key));
        }
    }

    fn key(name: &str) -> ObjectKey {
        ObjectKey::namespaced("default", name).unwrap()
    }

    /// A filtered event keeps its key and resync flag, also when an update becomes an add or a
    /// delete, and reaches the inner handler's own `on_event`.
    #[tokio::test]
    async fn filtering_passes_events_with_their_key_to_the_inner_on_event() {
        let inner = Keys::default();
        let filtered = FilteringHandler::new(kept, inner.clone());
        let events = [
            Event::added(key("keep-a"), cm("keep-a", "1"), true),
            Event::added(key("drop-a"), cm("drop-a", "1"), true),
            Event::updated(key("keep-a"), cm("keep-a", "1"), cm("keep-a", "1"), true),
            Event::updated(key("drop-b"), cm("drop-b", "1"), cm("keep-b", "2"), false),
            Event::updated(key("keep-c"), cm("keep-c", "1"), cm("drop-c", "2"), false),
            Event::updated(key("drop-d"), cm("drop-d", "1"), cm("drop-d", "2"), false),
            Event::deleted(key("keep-e"), DeletedObject::Known(cm("keep-e", "1"))),
        ];
        for event in events {
            filtered.on_event(event).await;
        }
        assert_eq!(
            *inner.0.lock(),
            [
                "default/keep-a added initial=true",
                "default/keep-a updated resync=true",
                "default/drop-b added initial=false",
                "default/keep-c deleted",
                "default/keep-e deleted",
            ]
        );
    }
}
