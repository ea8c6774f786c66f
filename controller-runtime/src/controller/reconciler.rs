//! [`Reconciler`]: what a controller calls for every key it takes from its queue, the
//! [`Request`] it passes and the [`Action`] or [`ReconcileError`] it gets back.

use std::error::Error as StdError;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;

use indexer::ObjectKey;
use informer::Object;

use crate::controller::action::Action;
use crate::controller::context::Context;

/// What to reconcile: the key of the primary object. Reconcilers are level-based: they read the
/// object's current state (from the cache, through the [`Context`]) rather than the event that
/// triggered them, and several events for one key may be folded into one request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// The primary object's namespace (if namespaced) and name.
    pub key: ObjectKey,
}

impl Request {
    /// A request for `key`.
    pub fn new(key: ObjectKey) -> Self {
        Self { key }
    }

    /// The object's namespace, `None` for cluster-scoped objects.
    pub fn namespace(&self) -> Option<&str> {
        self.key.namespace()
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.key.name()
    }
}

impl fmt::Display for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.key, f)
    }
}

/// A failed reconcile. Converted from any `std::error::Error` with `?`; an ordinary error is
/// retried after the key's backoff, a [`terminal`](Self::terminal) one is not retried (it is
/// logged and counted, and the key waits for its next change).
pub struct ReconcileError {
    source: Box<dyn StdError + Send + Sync>,
    terminal: bool,
}

impl ReconcileError {
    /// An error that is retried with backoff.
    pub fn new(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self {
            source: source.into(),
            terminal: false,
        }
    }

    /// An error that retrying cannot fix (invalid spec, say): the key is not requeued.
    pub fn terminal(source: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self {
            source: source.into(),
            terminal: true,
        }
    }

    /// Whether the error is terminal.
    pub fn is_terminal(&self) -> bool {
        self.terminal
    }

    /// The underlying error.
    pub fn source(&self) -> &(dyn StdError + Send + Sync + 'static) {
        self.source.as_ref()
    }
}

impl<E: StdError + Send + Sync + 'static> From<E> for ReconcileError {
    fn from(error: E) -> Self {
        Self::new(error)
    }
}

impl fmt::Display for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terminal {
            write!(f, "terminal error: ")?;
        }
        fmt::Display::fmt(&self.source, f)
    }
}

impl fmt::Debug for ReconcileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconcileError")
            .field("source", &self.source)
            .field("terminal", &self.terminal)
            .finish()
    }
}

/// Brings the world in line with the desired state of one primary object of type `K`.
///
/// Called by the controller's workers, never twice at once for the same key. Implement it for a
/// struct holding your dependencies, or wrap a closure with [`reconciler_fn`].
///
/// # Async style
///
/// `reconcile` is a native async trait method (it returns `impl Future + Send`), the same style
/// as the informer's `ResourceEventHandler`: implement it with a plain `async fn`, without the
/// `async-trait` macro and without boxing each call's future:
///
/// ```
/// use controller_runtime::controller::{Action, Context, ReconcileError, Reconciler, Request};
/// use k8s_openapi::api::core::v1::ConfigMap;
///
/// struct LogConfigMaps;
///
/// impl Reconciler<ConfigMap> for LogConfigMaps {
///     type Error = ReconcileError;
///
///     async fn reconcile(&self, request: Request, ctx: Context<ConfigMap>) -> Result<Action, ReconcileError> {
///         match ctx.get() {
///             Some(config) => println!("{request}: {} keys", config.data.iter().flatten().count()),
///             None => println!("{request}: gone"),
///         }
///         Ok(Action::done())
///     }
/// }
/// ```
///
/// The future must be `Send` (workers run on a multi-threaded runtime), so a reconcile must not
/// hold a non-`Send` value (a `std::sync::MutexGuard`, an `Rc`) across an `.await`. The trait
/// is not object-safe, which a controller does not need: it is generic over its reconciler.
pub trait Reconciler<K: Object>: Send + Sync + 'static {
    /// The error a reconcile can fail with; anything convertible into a [`ReconcileError`]
    /// (every `std::error::Error`, or `ReconcileError` itself to mark errors terminal).
    type Error: Into<ReconcileError> + Send;

    /// Reconciles the object named by `request`. `ctx` gives the client, the cache and, when the
    /// object is gone, its last known state.
    fn reconcile(
        &self,
        request: Request,
        ctx: Context<K>,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;
}

/// A [`Reconciler`] made from an async closure; built with [`reconciler_fn`].
pub struct FnReconciler<F, Fut> {
    f: F,
    _future: PhantomData<fn() -> Fut>,
}

/// Wraps `f(request, ctx)` as a [`Reconciler`]. Annotate the context's type
/// (`|req, ctx: Context<ConfigMap>| async move { .. }`) so the object type is known.
pub fn reconciler_fn<F, Fut>(f: F) -> FnReconciler<F, Fut> {
    FnReconciler {
        f,
        _future: PhantomData,
    }
}

impl<F, Fut> fmt::Debug for FnReconciler<F, Fut> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnReconciler")
    }
}

impl<K, F, Fut, E> Reconciler<K> for FnReconciler<F, Fut>
where
    K: Object,
    F: Fn(Request, Context<K>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Action, E>> + Send + 'static,
    E: Into<ReconcileError> + Send + 'static,
{
    type Error = E;

    fn reconcile(
        &self,
        request: Request,
        ctx: Context<K>,
    ) -> impl Future<Output = Result<Action, E>> + Send {
        (self.f)(request, ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_convert_and_keep_their_kind() {
        let retried: ReconcileError = std::io::Error::other("boom").into();
        assert!(!retried.is_terminal());
        assert_eq!(retried.to_string(), "boom");
        let terminal = ReconcileError::terminal("bad spec");
        assert!(terminal.is_terminal());
        assert_eq!(terminal.to_string(), "terminal error: bad spec");
        assert_eq!(terminal.source().to_string(), "bad spec");
    }
}
