//! External sources ([`ControllerBuilder::watches_stream`](crate::ControllerBuilder::watches_stream)):
//! keys to reconcile from anything outside the cluster's watches — a channel fed by a cloud
//! API's webhook, a timer, a message bus — as a [`futures::Stream`].
//!
//! Each source runs as one task of the running controller. Its keys take the same way as watch
//! events (the debouncer, if any, then the queue's dedup and rate limiting) but no predicate:
//! predicates judge objects, and a source yields only keys. An error item is logged and
//! counted ([`ControllerStats::source_errors`](crate::ControllerStats::source_errors)) and the
//! source is read on; a source that ends is logged and counted
//! ([`ControllerStats::sources_ended`](crate::ControllerStats::sources_ended)) and the
//! controller runs on with its other sources and watches.

use std::error::Error as StdError;
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{Stream, StreamExt};
use indexer::ObjectKey;
use tokio_util::sync::CancellationToken;
use workqueue::Priority;

use crate::controller::intake::Intake;
use crate::controller::reconciler::Request;
use crate::controller::stats::ControllerStats;

/// Why an external source yielded no key: any error, boxed.
pub type SourceError = Box<dyn StdError + Send + Sync>;

/// What an external source may yield: a key to reconcile ([`ObjectKey`] or [`Request`]), or a
/// `Result` of one, whose errors are logged and counted.
pub trait SourceItem: Send + 'static {
    /// The key to reconcile, or why there is none.
    fn into_key(self) -> Result<ObjectKey, SourceError>;
}

impl SourceItem for ObjectKey {
    fn into_key(self) -> Result<ObjectKey, SourceError> {
        Ok(self)
    }
}

impl SourceItem for Request {
    fn into_key(self) -> Result<ObjectKey, SourceError> {
        Ok(self.key)
    }
}

impl<T, E> SourceItem for Result<T, E>
where
    T: SourceItem,
    E: Into<SourceError> + Send + 'static,
{
    fn into_key(self) -> Result<ObjectKey, SourceError> {
        self.map_err(Into::into)?.into_key()
    }
}

/// One external source of a controller, as the builder received it.
pub(crate) struct Source {
    /// Names the source in logs: `stream #n` in the order of the builder's calls.
    pub(crate) name: String,
    /// The priority of its keys, as given (checked when the controller is built).
    pub(crate) priority: i32,
    keys: BoxStream<'static, Result<ObjectKey, SourceError>>,
}

impl Source {
    /// The source `name` reading `stream`, its keys at `priority`.
    pub(crate) fn new<S>(name: String, stream: S, priority: i32) -> Self
    where
        S: Stream + Send + 'static,
        S::Item: SourceItem,
    {
        Self {
            name,
            priority,
            keys: stream.map(SourceItem::into_key).boxed(),
        }
    }

    /// Reads the source until it ends or `shutdown`, handing its keys to `intake` at
    /// `priority`.
    pub(crate) async fn run(
        mut self,
        priority: Priority,
        intake: Intake,
        stats: Arc<ControllerStats>,
        controller: Arc<str>,
        shutdown: CancellationToken,
    ) {
        loop {
            let item = tokio::select! {
                biased;
                () = shutdown.cancelled() => return,
                item = self.keys.next() => item,
            };
            match item {
                Some(Ok(key)) => intake.add(key, priority),
                Some(Err(error)) => {
                    ControllerStats::count(&stats.source_errors);
                    tracing::warn!(
                        controller = %controller,
                        source = %self.name,
                        %error,
                        "external source yielded an error; reading on"
                    );
                }
                None => {
                    ControllerStats::count(&stats.sources_ended);
                    tracing::warn!(
                        controller = %controller,
                        source = %self.name,
                        "external source ended; the controller runs on with its other sources"
                    );
                    return;
                }
            }
        }
    }
}
