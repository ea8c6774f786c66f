use super::*;

use parking_lot::Mutex as PlMutex;

use crate::cache::{CacheKind, Metadata};
use crate::controller::enqueue::Enqueue;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};

/// A queue that records the keys added to it.
#[derive(Default)]
struct Recorded(PlMutex<Vec<(ObjectKey, Priority)>>);

impl Enqueue for Recorded {
    fn add(&self, key: ObjectKey, priority: Priority) {
        self.0.lock().push((key, priority));
    }

    fn add_after(&self, key: ObjectKey, _delay: Duration, priority: Priority) {
        self.0.lock().push((key, priority));
    }
}

/// An informer of `K` in `namespace` whose version is whatever `version` holds.
fn watched<K: CacheKind>(
    name: &str,
    namespace: Option<&str>,
    version: &Arc<PlMutex<String>>,
) -> WatchedInformer {
    let version = Arc::clone(version);
    WatchedInformer {
        kind: K::spec().key,
        name: name.to_owned(),
        namespace: namespace.map(str::to_owned),
        version: Box::new(move || version.lock().clone()),
    }
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::namespaced("ns", name).unwrap()
}

fn setup() -> (Arc<Staleness>, Arc<Recorded>) {
    let queue = Arc::new(Recorded::default());
    let staleness = Arc::new(Staleness::new(Duration::from_secs(5), queue.clone()));
    (staleness, queue)
}

#[test]
fn a_cache_is_behind_only_at_a_lower_comparable_version() {
    assert!(behind("9", "10"));
    assert!(!behind("10", "9"));
    assert!(!behind("10", "10"));
    // Not comparable: nothing to wait for.
    assert!(!behind("abc", "abd"));
    assert!(!behind("", "1"));
}

#[tokio::test(start_paused = true)]
async fn versions_that_are_not_comparable_are_refused_and_hold_nothing() {
    let (staleness, _) = setup();
    let cached = Arc::new(PlMutex::new("5".to_owned()));
    staleness.watch([watched::<ConfigMap>("maps", None, &cached)]);
    let kind = <ConfigMap as CacheKind>::spec().key;
    let a = key("a");
    // A write that returned an opaque version records nothing.
    for opaque in ["", "0", "01", "opaque-token"] {
        staleness.record(&a, &kind, Some("ns"), Some(opaque));
        assert_eq!(staleness.check(&a), Freshness::Fresh, "{opaque:?}");
    }
    // A claim on an informer whose version turns opaque is dropped, not waited on.
    staleness.record(&a, &kind, Some("ns"), Some("9"));
    assert!(matches!(staleness.check(&a), Freshness::Stale { .. }));
    *cached.lock() = "not-a-number".into();
    assert_eq!(staleness.check(&a), Freshness::Fresh);
    assert!(staleness.pending.lock().is_empty());
    assert_eq!(staleness.lag(), [("maps".into(), 0)]);
}

#[tokio::test(start_paused = true)]
async fn a_key_is_stale_until_every_informer_it_wrote_through_caught_up() {
    let (staleness, _) = setup();
    let (maps, secrets) = (
        Arc::new(PlMutex::new("5".to_owned())),
        Arc::new(PlMutex::new("5".to_owned())),
    );
    staleness.watch([
        watched::<ConfigMap>("maps", None, &maps),
        watched::<Secret>("secrets", None, &secrets),
    ]);
    let config_maps = <ConfigMap as CacheKind>::spec().key;
    let secret_kind = <Secret as CacheKind>::spec().key;
    let a = key("a");
    assert_eq!(staleness.check(&a), Freshness::Fresh, "nothing written");
    staleness.record(&a, &config_maps, Some("ns"), Some("7"));
    // A lower version written later does not lower the claim.
    staleness.record(&a, &config_maps, Some("ns"), Some("6"));
    staleness.record(&a, &secret_kind, Some("ns"), Some("8"));
    assert!(
        matches!(staleness.check(&a), Freshness::Stale { ref informer, .. } if informer == "maps")
    );
    *maps.lock() = "7".into();
    assert_eq!(
        staleness.check(&a),
        Freshness::Stale {
            informer: "secrets".into(),
            written: "8".into(),
            cached: "5".into()
        }
    );
    assert_eq!(staleness.lag(), [("maps".into(), 0), ("secrets".into(), 3)]);
    *secrets.lock() = "9".into();
    assert_eq!(staleness.check(&a), Freshness::Fresh);
    assert!(
        staleness.pending.lock().is_empty(),
        "claims dropped once met"
    );
    // Other keys never waited.
    assert_eq!(staleness.check(&key("b")), Freshness::Fresh);
}

#[tokio::test(start_paused = true)]
async fn only_watched_kinds_and_covered_namespaces_are_claimed() {
    let (staleness, _) = setup();
    let version = Arc::new(PlMutex::new("1".to_owned()));
    staleness.watch([
        watched::<Metadata<Secret>>("secrets in ns", Some("ns"), &version),
        watched::<Metadata<Secret>>("secrets in ns", Some("ns"), &version),
    ]);
    assert_eq!(staleness.informers.read().len(), 1, "kept once");
    let a = key("a");
    // A typed write of a kind watched as metadata counts; another namespace or kind does not.
    staleness.record(
        &a,
        &<Secret as CacheKind>::spec().key,
        Some("other"),
        Some("9"),
    );
    staleness.record(
        &a,
        &<ConfigMap as CacheKind>::spec().key,
        Some("ns"),
        Some("9"),
    );
    staleness.record(&a, &<Secret as CacheKind>::spec().key, Some("ns"), None);
    assert_eq!(staleness.check(&a), Freshness::Fresh);
    staleness.record(
        &a,
        &<Secret as CacheKind>::spec().key,
        Some("ns"),
        Some("9"),
    );
    assert!(matches!(staleness.check(&a), Freshness::Stale { .. }));
}

#[tokio::test(start_paused = true)]
async fn a_parked_key_goes_back_once_on_progress_or_after_its_backoff() {
    let (staleness, queue) = setup();
    let version = Arc::new(PlMutex::new("1".to_owned()));
    staleness.watch([watched::<ConfigMap>("maps", None, &version)]);
    let kind = <ConfigMap as CacheKind>::spec().key;
    let (a, b) = (key("a"), key("b"));
    staleness.record(&a, &kind, Some("ns"), Some("3"));
    staleness.record(&b, &kind, Some("ns"), Some("5"));
    for parked in [&a, &b] {
        assert!(matches!(staleness.check(parked), Freshness::Stale { .. }));
    }
    assert_eq!(staleness.park(&a, Priority::LOW), Duration::from_millis(10));
    assert_eq!(
        staleness.park(&b, Priority::NORMAL),
        Duration::from_millis(10)
    );
    // Progress short of both: nothing goes back.
    *version.lock() = "2".into();
    staleness.progressed();
    assert!(queue.0.lock().is_empty());
    // Past a's write only: a goes back, once, with its priority.
    *version.lock() = "4".into();
    staleness.progressed();
    staleness.progressed();
    staleness.retry(&a);
    assert_eq!(*queue.0.lock(), [(a.clone(), Priority::LOW)]);
    // b's backoff doubles, and its retry puts it back.
    assert!(matches!(staleness.check(&b), Freshness::Stale { .. }));
    assert_eq!(
        staleness.park(&b, Priority::NORMAL),
        Duration::from_millis(20)
    );
    staleness.retry(&b);
    staleness.retry(&b);
    assert_eq!(queue.0.lock().len(), 2);
    assert_eq!(staleness.parked.load(Ordering::Relaxed), 0);
}

#[tokio::test(start_paused = true)]
async fn a_stale_key_is_reconciled_anyway_after_the_timeout_and_a_deletion_ends_its_claims() {
    let (staleness, _) = setup();
    let version = Arc::new(PlMutex::new("1".to_owned()));
    staleness.watch([watched::<ConfigMap>("maps", None, &version)]);
    let kind = <ConfigMap as CacheKind>::spec().key;
    let a = key("a");
    staleness.record(&a, &kind, Some("ns"), Some("9"));
    assert!(matches!(staleness.check(&a), Freshness::Stale { .. }));
    tokio::time::advance(Duration::from_secs(4)).await;
    // The retry never goes past the timeout.
    assert_eq!(
        staleness.park(&a, Priority::NORMAL),
        Duration::from_millis(10)
    );
    for _ in 0..10 {
        staleness.park(&a, Priority::NORMAL);
    }
    assert_eq!(staleness.park(&a, Priority::NORMAL), Duration::from_secs(1));
    tokio::time::advance(Duration::from_millis(999)).await;
    assert_eq!(
        staleness.park(&a, Priority::NORMAL),
        Duration::from_millis(1)
    );
    tokio::time::advance(Duration::from_millis(1)).await;
    assert_eq!(staleness.check(&a), Freshness::GaveUp);
    assert_eq!(staleness.check(&a), Freshness::Fresh);
    assert_eq!(staleness.parked.load(Ordering::Relaxed), 0);

    staleness.record(&a, &kind, Some("ns"), Some("10"));
    staleness.forget(&a);
    assert_eq!(
        staleness.check(&a),
        Freshness::Fresh,
        "the deletion ended it"
    );
}
