//! The error types of the reflector and its lister-watchers, with the classification that the
//! relist-versus-rewatch decisions of client-go are based on. At the bottom of the crate: the
//! decoders, the lister-watchers and the reflector all report through them, and they import
//! none of those.
//!
//! - [`Error`]: everything that can interrupt listing and watching;
//! - [`WatchDecodeError`] (`watch_decode`): why one line of a watch stream yielded no event.

use std::error::Error as StdError;
use std::time::Duration;

use kube::core::Status;

mod watch_decode;

pub use watch_decode::WatchDecodeError;
pub(crate) use watch_decode::excerpt;

/// Everything that can interrupt listing and watching.
///
/// None of these is fatal to a [`Reflector`](crate::Reflector): it reports each one to the
/// configured error handler, then relists or rewatches as client-go does. The classification
/// methods ([`Error::is_expired`], [`Error::is_too_many_requests`], ...) are what those decisions
/// use, so a custom [`ListerWatcher`](crate::ListerWatcher) should map its failures onto
/// [`Error::Request`] (for `kube` errors) or [`Error::Status`] (for API statuses) to keep them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A list or watch request to the API server failed (HTTP error status, connection error,
    /// or a response that did not decode).
    #[error("{verb} request failed: {source}")]
    Request {
        /// `"list"` or `"watch"`.
        verb: &'static str,
        /// What the client reported.
        #[source]
        source: kube::Error,
    },

    /// The API server does not serve the listed or watched resource: it answered the
    /// collection's URL with 404 (a real server's plain `404 page not found`, or a `NotFound`
    /// status), so its API group and version, or for a custom resource its
    /// CustomResourceDefinition, is not installed. The reflector keeps retrying with backoff and
    /// syncs once the resource is served.
    #[error(
        "the API server does not serve {resource} (404 for {url}): is its CustomResourceDefinition installed, or its API group enabled? ({source})"
    )]
    NotServed {
        /// `<plural>.<group>` (`<plural>` for the core group), e.g.
        /// `foos.samplecontroller.k8s.io`: the name of the CustomResourceDefinition that
        /// would serve it.
        resource: String,
        /// The collection's URL path.
        url: String,
        /// What the client reported.
        #[source]
        source: kube::Error,
    },

    /// The API server reported a failure as a `Status`: an `ERROR` event inside a watch stream,
    /// or an equivalent status from a custom lister-watcher.
    #[error("the API server reported {} {}: {}", .0.code, .0.reason, .0.message)]
    Status(Box<Status>),

    /// One object of a list or watch event could not be decoded; it was skipped.
    #[error("an object from the API server does not decode ({source}); it was skipped")]
    Decode {
        /// The decoding error.
        #[source]
        source: kube::Error,
    },

    /// A line of a watch stream did not yield an event (see [`WatchDecodeError`] for which
    /// ones the reflector skips, and which end the watch).
    #[error("watch stream: {0}")]
    WatchDecode(#[from] WatchDecodeError),

    /// An object of another kind than the watched one arrived; it was skipped.
    #[error(
        "expected an object of {expected} but received {received}; it was skipped (check the ApiResource the lister-watcher was built with)"
    )]
    UnexpectedKind {
        /// `apiVersion/kind` the lister-watcher was built for.
        expected: String,
        /// `apiVersion/kind` of the received object.
        received: String,
    },

    /// An object without `metadata.name` arrived, so it has no store key; it was skipped.
    #[error("a {event} object has no usable store key ({source}); it was skipped")]
    MissingMetadata {
        /// The event type (`ADDED`, `MODIFIED`, `DELETED`) or `list`.
        event: &'static str,
        /// Why keying failed.
        #[source]
        source: indexer::Error,
    },

    /// A list response carried no `metadata.resourceVersion`, so a watch cannot resume from it.
    #[error(
        "list response has no metadata.resourceVersion, so no watch can start from it; the server is not a conforming Kubernetes API server"
    )]
    MissingResourceVersion,

    /// A watch ended less than a second after it opened without delivering any event: the
    /// server is likely overloaded or rejecting the watch silently, so the reflector relists.
    #[error(
        "watch closed after {elapsed:?} without any event; relisting after a backoff (server overloaded or dropping watches?)"
    )]
    VeryShortWatch {
        /// How long the watch was open.
        elapsed: Duration,
    },

    /// A streaming list (`sendInitialEvents`) did not end with the `k8s.io/initial-events-end`
    /// bookmark: the server does not support streaming lists, or the stream broke or went
    /// silent first. The reflector falls back to a paginated list.
    #[error(
        "streaming list incomplete: {reason}; falling back to a paginated list (ReflectorOptions::streaming_list(false) pages every list)"
    )]
    StreamingListIncomplete {
        /// What happened instead of the end bookmark.
        reason: &'static str,
    },

    /// The store refused a write.
    #[error("store {operation} failed: {source}")]
    Store {
        /// `add`, `update`, `delete`, `replace` or `resync`.
        operation: &'static str,
        /// What the store reported.
        #[source]
        source: indexer::Error,
    },

    /// A custom [`ListerWatcher`](crate::ListerWatcher) failed for a reason of its own.
    #[error("lister-watcher failed: {0}")]
    Other(#[source] Box<dyn StdError + Send + Sync>),
}

/// The `StatusCause` reason of a "Too large resource version" answer.
const TOO_LARGE_CAUSE: &str = "ResourceVersionTooLarge";
/// The message older servers used for the same condition.
const TOO_LARGE_MESSAGE: &str = "Too large resource version";

impl Error {
    /// The error of a failed `verb` request to the collection at `url`: [`Error::NotServed`]
    /// for a 404 (a collection is never "not found" otherwise: an empty namespace lists
    /// nothing), [`Error::Request`] for anything else.
    pub fn request(verb: &'static str, url: &str, source: kube::Error) -> Self {
        match &source {
            kube::Error::Api(status) if status.code == 404 => Error::NotServed {
                resource: served_name(url),
                url: url.to_owned(),
                source,
            },
            _ => Error::Request { verb, source },
        }
    }

    /// The API `Status` behind this error, if the server sent one.
    pub fn status(&self) -> Option<&Status> {
        match self {
            Error::Request {
                source: kube::Error::Api(status),
                ..
            }
            | Error::NotServed {
                source: kube::Error::Api(status),
                ..
            } => Some(status),
            Error::Status(status) => Some(status),
            _ => None,
        }
    }

    /// The HTTP status code the server answered with, if any.
    pub fn code(&self) -> Option<u16> {
        self.status().map(|s| s.code)
    }

    /// The resource version asked for is older than the server's history (HTTP 410, reason
    /// `Expired` or `Gone`): the reflector must relist.
    pub fn is_expired(&self) -> bool {
        self.status()
            .is_some_and(|s| s.code == 410 || s.reason == "Expired" || s.reason == "Gone")
    }

    /// The resource version asked for is newer than the server's cache ("Too large resource
    /// version"): the reflector relists from the latest state.
    pub fn is_too_large_resource_version(&self) -> bool {
        self.status().is_some_and(|s| {
            let cause = s
                .details
                .as_ref()
                .is_some_and(|d| d.causes.iter().any(|c| c.reason == TOO_LARGE_CAUSE));
            let message = s.message.contains(TOO_LARGE_MESSAGE)
                || s.details.as_ref().is_some_and(|d| {
                    d.causes
                        .iter()
                        .any(|c| c.message.contains(TOO_LARGE_MESSAGE))
                });
            cause || (s.code == 504 && message) || (s.reason == "Timeout" && message)
        })
    }

    /// The server asked the client to slow down (HTTP 429).
    pub fn is_too_many_requests(&self) -> bool {
        self.code() == Some(429) || self.status().is_some_and(|s| s.reason == "TooManyRequests")
    }

    /// The connection to the server was refused (the server is restarting).
    pub fn is_connection_refused(&self) -> bool {
        let Error::Request { source, .. } = self else {
            return false;
        };
        let mut cause: Option<&(dyn StdError + 'static)> = Some(source);
        while let Some(err) = cause {
            if let Some(io) = err.downcast_ref::<std::io::Error>()
                && io.kind() == std::io::ErrorKind::ConnectionRefused
            {
                return true;
            }
            cause = err.source();
        }
        false
    }

    /// A failure after which client-go waits one backoff step and opens a new watch from the
    /// last resource version instead of relisting: 429 or connection refused.
    pub fn is_retriable_watch_error(&self) -> bool {
        self.is_too_many_requests() || self.is_connection_refused()
    }

    /// A problem with one object or one line, which is logged and skipped without ending the
    /// watch.
    pub(crate) fn is_skippable_object(&self) -> bool {
        matches!(
            self,
            Error::Decode { .. }
                | Error::UnexpectedKind { .. }
                | Error::MissingMetadata { .. }
                | Error::WatchDecode(
                    WatchDecodeError::Malformed { .. } | WatchDecodeError::UnknownType { .. }
                )
        )
    }

    /// The watch connection broke while reading (reset, unexpected EOF, a last line cut
    /// short): the stream simply ended, and a rewatch from the last resource version recovers.
    /// (An oversize line is neither this nor skippable: the watch ends and the reflector
    /// relists, which delivers the object the line carried.)
    pub(crate) fn is_stream_read_error(&self) -> bool {
        matches!(
            self,
            Error::Request {
                source: kube::Error::ReadEvents(_),
                ..
            } | Error::WatchDecode(WatchDecodeError::Truncated { .. })
        )
    }
}

/// `<plural>.<group>` of a collection URL path (`/apis/<group>/<version>/[namespaces/<ns>/]<plural>`),
/// `<plural>` for the core group (`/api/v1/...`); the path itself when it has neither shape.
fn served_name(url: &str) -> String {
    let path = url.split('?').next().unwrap_or(url);
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (group, rest) = match segments.as_slice() {
        ["apis", group, _version, rest @ ..] => (Some(*group), rest),
        ["api", _version, rest @ ..] => (None, rest),
        _ => return path.to_owned(),
    };
    let plural = match rest {
        ["namespaces", _, plural, ..] | [plural, ..] => *plural,
        [] => return path.to_owned(),
    };
    match group {
        Some(group) => format!("{plural}.{group}"),
        None => plural.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use kube::core::response::{StatusCause, StatusDetails};

    use super::*;

    #[test]
    fn a_404_for_the_collection_names_the_resource_not_served() {
        let not_found = || {
            kube::Error::Api(Box::new(Status {
                code: 404,
                reason: "NotFound".into(),
                message: "404 page not found".into(),
                ..Status::default()
            }))
        };
        let error = Error::request(
            "list",
            "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/a/foos",
            not_found(),
        );
        assert!(
            matches!(&error, Error::NotServed { resource, .. } if resource == "foos.samplecontroller.k8s.io"),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(
            message.contains("foos.samplecontroller.k8s.io"),
            "{message}"
        );
        assert!(message.contains("CustomResourceDefinition"), "{message}");
        assert_eq!(error.code(), Some(404));
        let core = Error::request("watch", "/api/v1/pods", not_found());
        assert!(matches!(core, Error::NotServed { resource, .. } if resource == "pods"));
        let other = Error::request(
            "list",
            "/api/v1/pods",
            kube::Error::Api(Box::new(Status {
                code: 500,
                ..Status::default()
            })),
        );
        assert!(matches!(other, Error::Request { verb: "list", .. }));
    }

    fn status(code: u16, reason: &str, message: &str) -> Error {
        Error::Status(Box::new(Status {
            code,
            reason: reason.into(),
            message: message.into(),
            ..Status::default()
        }))
    }

    #[test]
    fn classifies_expired_and_gone() {
        assert!(status(410, "Expired", "too old").is_expired());
        assert!(status(410, "Gone", "too old").is_expired());
        assert!(!status(500, "InternalError", "boom").is_expired());
    }

    #[test]
    fn classifies_too_large_resource_version_by_cause_and_by_message() {
        let mut by_cause = Status {
            code: 504,
            reason: "Timeout".into(),
            ..Status::default()
        };
        by_cause.details = Some(StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes: vec![StatusCause {
                reason: TOO_LARGE_CAUSE.into(),
                message: String::new(),
                field: String::new(),
            }],
            retry_after_seconds: 0,
        });
        assert!(Error::Status(Box::new(by_cause)).is_too_large_resource_version());
        assert!(
            status(504, "Timeout", "Too large resource version: 9, current: 3")
                .is_too_large_resource_version()
        );
        assert!(!status(504, "Timeout", "slow").is_too_large_resource_version());
    }

    #[test]
    fn classifies_throttling_as_retriable() {
        assert!(status(429, "TooManyRequests", "slow down").is_retriable_watch_error());
        assert!(!status(500, "InternalError", "boom").is_retriable_watch_error());
    }

    #[test]
    fn finds_connection_refused_in_the_source_chain() {
        let io = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let err = Error::Request {
            verb: "watch",
            source: kube::Error::ReadEvents(io),
        };
        assert!(err.is_connection_refused());
        assert!(err.is_retriable_watch_error());
    }
}
