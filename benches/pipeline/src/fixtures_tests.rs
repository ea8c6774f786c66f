//! The workload's markers: each tells that its namespace has every event.

use super::*;

/// The index of each namespace's last event, by namespace number.
fn last_event_of_each_namespace(fixture: &Fixture) -> BTreeMap<usize, usize> {
    let mut last = BTreeMap::new();
    for (j, &k) in fixture.event_namespaces.iter().enumerate() {
        last.insert(k, j);
    }
    last
}

/// The event index a marker's resource version stands for.
fn event_index(fixture: &Fixture, marker: &Marker) -> usize {
    let rv: u64 = marker.resource_version.parse().unwrap();
    usize::try_from(rv - fixture.list_rv - 1).unwrap()
}

#[test]
fn each_namespace_with_events_ends_with_its_marker() {
    for (objects, events, namespaces) in [(300, 200, 3), (300, 2, 3), (120, 400, 50), (7, 45, 1)] {
        let fixture = Fixture::build(objects, events, namespaces).unwrap();
        assert!(fixture.markers_cover_every_namespace());
        let markers = fixture.namespace_markers();
        let last = last_event_of_each_namespace(&fixture);
        assert_eq!(markers.len(), last.len(), "{objects}/{events}/{namespaces}");
        for marker in &markers {
            let k = namespace_number(&marker.namespace).unwrap();
            let j = event_index(&fixture, marker);
            assert_eq!(last.get(&k), Some(&j), "{marker:?}");
            let line = std::str::from_utf8(&fixture.events[j]).unwrap();
            assert!(line.starts_with("{\"type\":\"MODIFIED\""), "{line}");
            assert!(
                line.contains(&format!("\"name\":\"{}\"", marker.name)),
                "{line}"
            );
        }
        assert_eq!(markers.last(), Some(&fixture.watch_marker()));
    }
}

#[test]
fn markers_say_when_a_namespace_without_listed_pods_gets_events() {
    let fixture = Fixture::build(20, 200, 50).unwrap();
    assert!(!fixture.markers_cover_every_namespace());
}

#[test]
fn every_added_pod_is_deleted_by_the_end() {
    let fixture = Fixture::build(300, 200, 3).unwrap();
    let starting = |kind: &str| {
        let prefix = format!("{{\"type\":\"{kind}\"");
        fixture
            .events
            .iter()
            .filter(|line| line.starts_with(prefix.as_bytes()))
            .count()
    };
    assert!(starting("ADDED") > 0);
    assert_eq!(starting("ADDED"), starting("DELETED"));
    assert_eq!(fixture.objects_after_events(), 300);
}

#[test]
fn a_relist_marks_the_last_listed_pod_of_each_namespace() {
    for (objects, namespaces) in [(300, 3), (300, 50), (20, 50), (5, 1)] {
        let fixture = Fixture::build(objects, 10, namespaces).unwrap();
        let markers = fixture.relist_markers();
        let mut last_of_namespace = BTreeMap::new();
        for i in 0..objects {
            last_of_namespace.insert(namespace_name(i % namespaces), format!("pod-{i}"));
        }
        let marked: BTreeMap<String, String> = markers
            .iter()
            .map(|m| (m.namespace.clone(), m.name.clone()))
            .collect();
        assert_eq!(marked, last_of_namespace, "{objects}/{namespaces}");
        for (marker, sentinel) in markers.iter().zip(&fixture.relist_sentinels) {
            let pod: Pod = serde_json::from_slice(sentinel).unwrap();
            assert_eq!(pod.metadata.name.as_deref(), Some(marker.name.as_str()));
            assert_eq!(
                pod.metadata.resource_version.as_deref(),
                Some(marker.resource_version.as_str())
            );
        }
    }
}
