//! The sample-controller's event handlers (`handleObject`) and its queue's rate limiter: a
//! Deployment enqueues the Foo that controls it, if that Foo is in the manager's cache.

use std::time::Duration;

use controller_runtime::ObjectKey;
use controller_runtime::workqueue::RateLimiter;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Api;
use kube::api::PostParams;
use testenv::TestEnv;

use crate::sample_controller::controller::{controlling_foo, rate_limiter};
use crate::sample_controller::foo::{Foo, crd, new_foo};

fn owned_by(namespace: &str, kind: &str, name: &str) -> Deployment {
    let mut deployment = Deployment::default();
    deployment.metadata.name = Some("web".into());
    deployment.metadata.namespace = Some(namespace.into());
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

#[tokio::test]
async fn deployments_map_to_their_existing_controlling_foo() {
    let env = TestEnv::builder().crd(crd()).start().await.unwrap();
    let ns = env.namespace();
    let foos: Api<Foo> = Api::namespaced(env.client(), ns);
    foos.create(&PostParams::default(), &new_foo("owner", "web", Some(1)))
        .await
        .unwrap();
    let manager = env.manager();
    let cache = manager.cache();
    // Before the manager caches Foos, no Deployment maps to one.
    assert!(controlling_foo(&cache, &owned_by(ns, "Foo", "owner")).is_none());
    cache.informers::<Foo>().unwrap();
    let mut running = env.start_manager(manager);
    running.wait_synced().await.unwrap();

    let key = controlling_foo(&cache, &owned_by(ns, "Foo", "owner")).unwrap();
    assert_eq!(key.to_string(), format!("{ns}/owner"));
    // Orphans, other kinds, and no controller: nothing to enqueue.
    assert!(controlling_foo(&cache, &owned_by(ns, "Foo", "gone")).is_none());
    assert!(controlling_foo(&cache, &owned_by(ns, "ReplicaSet", "owner")).is_none());
    let mut uncontrolled = owned_by(ns, "Foo", "owner");
    uncontrolled.metadata.owner_references.as_mut().unwrap()[0].controller = None;
    assert!(controlling_foo(&cache, &uncontrolled).is_none());
    running.stop().await.unwrap();
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
