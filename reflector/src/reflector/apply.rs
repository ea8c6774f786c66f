//! One item of a watch stream into a store (the per-event part of client-go's
//! `handleAnyWatch`): the write an object event asks for, keyed once and wrapped in its `Arc`
//! once; what a bookmark says; and what ends the stream. Shared by the steady-state watch and
//! the streaming list, which applies its initial events to a buffer.

use std::sync::Arc;

use indexer::{ObjectKeyRef, Store};
use kube::api::WatchEvent;

use super::shared::Shared;
use crate::{Error, Object};

/// The annotation of the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END_ANNOTATION: &str = "k8s.io/initial-events-end";

/// What one item of a watch stream means for the loop reading it.
pub(super) enum Step {
    /// An object event was applied (or skipped); `resource_version` is the object's.
    Applied { resource_version: Option<String> },
    /// A bookmark: no store change, only a resource version.
    Bookmark {
        resource_version: String,
        initial_events_end: bool,
    },
    /// The stream ended (cleanly, or its connection broke while reading).
    Closed,
    /// The server reported an error or the stream failed: the watch is over.
    Failed(Error),
}

/// The store write an object event asks for.
#[derive(Clone, Copy)]
enum Write {
    Add,
    Update,
    Delete,
}

impl Write {
    /// The watch event type, for messages.
    fn event(self) -> &'static str {
        match self {
            Write::Add => "ADDED",
            Write::Update => "MODIFIED",
            Write::Delete => "DELETED",
        }
    }

    /// The store operation, for messages.
    fn operation(self) -> &'static str {
        match self {
            Write::Add => "add",
            Write::Update => "update",
            Write::Delete => "delete",
        }
    }
}

/// Applies one item of a watch stream to `store` (the real store, or a streaming list's
/// buffer) and says what it was. Skipped objects are reported through `shared`.
pub(super) fn apply<K: Object>(
    shared: &Shared<K>,
    store: &dyn Store<K>,
    item: Option<Result<WatchEvent<K>, Error>>,
) -> Step {
    match item {
        None => Step::Closed,
        Some(Ok(WatchEvent::Added(obj))) => write(shared, store, Write::Add, obj),
        Some(Ok(WatchEvent::Modified(obj))) => write(shared, store, Write::Update, obj),
        Some(Ok(WatchEvent::Deleted(obj))) => write(shared, store, Write::Delete, obj),
        Some(Ok(WatchEvent::Bookmark(bookmark))) => Step::Bookmark {
            initial_events_end: bookmark
                .metadata
                .annotations
                .get(INITIAL_EVENTS_END_ANNOTATION)
                .is_some_and(|v| v == "true"),
            resource_version: bookmark.metadata.resource_version,
        },
        Some(Ok(WatchEvent::Error(status))) => Step::Failed(Error::Status(status)),
        Some(Err(error)) if error.is_skippable_object() => {
            tracing::warn!(%error, "skipping a watch event");
            shared.report_quietly(&error);
            Step::Applied {
                resource_version: None,
            }
        }
        Some(Err(error)) if error.is_stream_read_error() => {
            tracing::debug!(%error, "watch connection broke");
            Step::Closed
        }
        Some(Err(error)) => Step::Failed(error),
    }
}

/// Writes one event's object: keyed once, wrapped in its `Arc` once. Objects without a usable
/// key are skipped. A store error ends the watch: the relist that follows gives the store the
/// whole state again, so a transient store failure heals.
fn write<K: Object>(shared: &Shared<K>, store: &dyn Store<K>, write: Write, obj: K) -> Step {
    if let Err(source) = ObjectKeyRef::of(&obj).and_then(|key| key.validate()) {
        let error = Error::MissingMetadata {
            event: write.event(),
            source,
        };
        tracing::warn!(%error, "skipping a watch event");
        shared.report_quietly(&error);
        return Step::Applied {
            resource_version: None,
        };
    }
    let resource_version = obj.meta().resource_version.clone();
    // A compact copy; the decoded original, with its slack, is freed here.
    let obj = Arc::new(if shared.options.compact_objects {
        obj.clone()
    } else {
        obj
    });
    let result = match write {
        Write::Add => store.add(obj),
        Write::Update => store.update(obj),
        Write::Delete => store.delete(obj),
    };
    match result {
        Ok(()) => Step::Applied { resource_version },
        Err(source) => Step::Failed(Error::Store {
            operation: write.operation(),
            source,
        }),
    }
}
