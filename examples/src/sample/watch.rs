//! Which events enqueue which Foo (the Go controller's event handlers) and the queue's rate
//! limiter.

use std::time::Duration;

use controller_runtime::predicate::ResourceVersionChanged;
use controller_runtime::{Lister, ObjectKey, Predicate, get_controller_of};
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kube::core::ObjectMeta;
use workqueue::{ItemExponentialFailure, MaxOf, RateLimiter, TokenBucket};

use crate::foo::Foo;

/// Foo events that enqueue the Foo: adds and updates. A deleted Foo needs no work (its
/// Deployment is garbage-collected through the owner reference), so deletes are dropped.
#[derive(Clone, Copy, Debug, Default)]
pub struct FooAddOrUpdate;

impl Predicate for FooAddOrUpdate {
    fn delete(&self, _meta: &ObjectMeta) -> bool {
        false
    }
}

/// Deployment updates enqueue only when the resourceVersion changed (periodic resyncs don't).
pub fn deployment_predicate() -> ResourceVersionChanged {
    ResourceVersionChanged
}

/// The Foo to enqueue for a Deployment event (`handleObject`): the controller owner, if it is
/// a Foo that exists in the cache. Deleted Deployments arrive here unwrapped from tombstones.
pub fn controlling_foo(foos: &Lister<Foo>, deployment: &Deployment) -> Option<ObjectKey> {
    let owner = get_controller_of(&deployment.metadata)?;
    if owner.kind != "Foo" {
        return None;
    }
    let namespace = deployment.namespace();
    let key = ObjectKey::new(namespace.as_deref(), &owner.name).ok()?;
    if foos.indexer().get_by_key(&key).is_none() {
        tracing::debug!(
            deployment = %deployment.name_any(),
            foo = %key,
            "ignore orphaned object"
        );
        return None;
    }
    Some(key)
}

/// The sample-controller's queue limiter: the slower of a per-item exponential backoff
/// (5 ms doubling to 1000 s) and an overall token bucket of 50 qps with a burst of 300.
pub fn rate_limiter() -> Result<impl RateLimiter<ObjectKey>, workqueue::Error> {
    let exponential =
        ItemExponentialFailure::new(Duration::from_millis(5), Duration::from_secs(1000));
    let bucket = TokenBucket::new(50.0, 300)?;
    Ok(MaxOf::new(vec![Box::new(exponential), Box::new(bucket)]))
}
