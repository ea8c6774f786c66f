//! External sources ([`ControllerBuilder::watches_stream`](crate::controller::ControllerBuilder::watches_stream)):
//! keys to reconcile from anything outside the cluster's watches — a channel fed by a cloud
//! API's webhook, a timer, a message bus — as a [`futures::Stream`].
//!
//! Each source runs as one task of the running controller. Its keys take the same way as watch
//! events (the debouncer, if any, then the queue's dedup and rate limiting) but no predicate:
//! predicates judge objects, and a source yields only keys. An error item is logged and
//! counted ([`ControllerStats::source_errors`](crate::controller::ControllerStats::source_errors)) and the
//! source is read on; a source that ends is logged and counted
//! ([`ControllerStats::sources_ended`](crate::controller::ControllerStats::sources_ended)) and the
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

/// An external source of keys to reconcile: any [`Stream`] of [`ObjectKey`]s or
/// [`Request`]s, or of `Result`s of them, with the priority its keys are queued with (default
/// [`Priority::NORMAL`]) and a name for logs. Give it to
/// [`ControllerBuilder::watches_stream`](crate::controller::ControllerBuilder::watches_stream);
/// a plain stream converts into one.
///
/// ```
/// # use std::time::Duration;
/// # use controller_runtime::controller::{KeyStream, Priority};
/// # use controller_runtime::ObjectKey;
/// // One key every five minutes, behind live changes.
/// let inventory = KeyStream::new(futures::stream::unfold((), |()| async {
///     tokio::time::sleep(Duration::from_secs(300)).await;
///     Some((ObjectKey::namespaced("default", "inventory"), ()))
/// }))
/// .priority(Priority::LOW)
/// .named("inventory timer");
/// # let _ = inventory;
/// ```
pub struct KeyStream {
    name: Option<String>,
    priority: Priority,
    keys: BoxStream<'static, Result<ObjectKey, SourceError>>,
}

impl std::fmt::Debug for KeyStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyStream")
            .field("name", &self.name)
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl KeyStream {
    /// The source reading `stream`, its keys at [`Priority::NORMAL`].
    pub fn new<S>(stream: S) -> Self
    where
        S: Stream + Send + 'static,
        S::Item: SourceItem,
    {
        Self {
            name: None,
            priority: Priority::NORMAL,
            keys: stream.map(SourceItem::into_key).boxed(),
        }
    }

    /// Queues the source's keys with `priority`.
    pub fn priority(mut self, priority: Priority) -> Self {
        self.priority = priority;
        self
    }

    /// Names the source in logs (default: `stream #n`, in the order of the builder's calls).
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The source's name, or `default`.
    pub(crate) fn name_or(&mut self, default: impl FnOnce() -> String) -> String {
        self.name.get_or_insert_with(default).clone()
    }
}

impl<S> From<S> for KeyStream
where
    S: Stream + Send + 'static,
    S::Item: SourceItem,
{
    fn from(stream: S) -> Self {
        KeyStream::new(stream)
    }
}

impl KeyStream {
    /// Reads the source until it ends or `shutdown`, handing its keys to `intake` at its
    /// priority.
    pub(crate) async fn run(
        mut self,
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
                Some(Ok(key)) => intake.add(key, self.priority),
                Some(Err(error)) => {
                    ControllerStats::count(&stats.source_errors);
                    tracing::warn!(
                        controller = %controller,
                        source = self.name.as_deref().unwrap_or("stream"),
                        %error,
                        "external source yielded an error; reading on"
                    );
                }
                None => {
                    ControllerStats::count(&stats.sources_ended);
                    tracing::warn!(
                        controller = %controller,
                        source = self.name.as_deref().unwrap_or("stream"),
                        "external source ended; the controller runs on with its other sources"
                    );
                    return;
                }
            }
        }
    }
}
