//! Which events enqueue which Foo (the Go controller's event handlers) and the queue's rate
//! limiter.

use std::time::Duration;

use controller_runtime::predicate::ResourceVersionChanged;
use controller_runtime::{Lister, ObjectKey, Predicate, get_controller_of};
use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use workqueue::{ItemExponentialFailure, MaxOf, RateLimiter, TokenBucket};

use crate::foo::Foo;

/// Foo events that enqueue the Foo: adds and updates. A deleted Foo needs no work (its
/// Deployment is garbage-collected through the owner reference), so deletes are dropped.
#[derive(Clone, Copy, Debug, Default)]
pub struct FooAddOrUpdate;

impl Predicate<Foo> for FooAddOrUpdate {
    fn delete(&self, _foo: &Foo) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use indexer::{Indexer, Indexers, Store};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    fn owned_by(kind: &str, name: &str) -> Deployment {
        let mut deployment = Deployment::default();
        deployment.metadata.name = Some("web".into());
        deployment.metadata.namespace = Some("default".into());
        deployment.metadata.owner_references = Some(vec![OwnerReference {
            api_version: "samplecontroller.k8s.io/v1alpha1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: "uid-1".into(),
            controller: Some(true),
            block_owner_deletion: Some(true),
        }]);
        deployment
    }

    #[test]
    fn deployments_map_to_their_existing_controlling_foo() {
        let cache: Indexer<Foo> = Indexer::new(Indexers::default());
        let mut foo = crate::foo::new_foo("owner", "web", Some(1));
        foo.metadata.namespace = Some("default".into());
        cache.add(std::sync::Arc::new(foo)).unwrap();
        let foos = Lister::new(cache);

        let key = controlling_foo(&foos, &owned_by("Foo", "owner")).unwrap();
        assert_eq!(key.to_string(), "default/owner");
        // Orphans, other kinds, and no controller: nothing to enqueue.
        assert!(controlling_foo(&foos, &owned_by("Foo", "gone")).is_none());
        assert!(controlling_foo(&foos, &owned_by("ReplicaSet", "owner")).is_none());
        let mut uncontrolled = owned_by("Foo", "owner");
        uncontrolled.metadata.owner_references.as_mut().unwrap()[0].controller = None;
        assert!(controlling_foo(&foos, &uncontrolled).is_none());
    }

    #[test]
    fn limiter_backs_off_from_5ms_and_allows_a_burst_of_300() {
        let limiter = rate_limiter().unwrap();
        let key = ObjectKey::new(Some("default"), "a").unwrap();
        let delays: Vec<Duration> = (0..4).map(|_| limiter.when(&key)).collect();
        let ms = Duration::from_millis;
        assert_eq!(delays, [ms(5), ms(10), ms(20), ms(40)]);
        limiter.forget(&key);
        assert_eq!(limiter.when(&key), ms(5));
        // The bucket's burst (300) is far from spent, so only the per-item backoff counts.
        let others: Vec<Duration> = (0..250)
            .map(|i| limiter.when(&ObjectKey::new(Some("default"), &format!("k{i}")).unwrap()))
            .collect();
        assert!(others.iter().all(|delay| *delay == ms(5)));
    }
}
