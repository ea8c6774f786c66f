//! Function indices keep each object's values from its insert: updates and deletes un-index
//! the stored values and never call the index function on the object that goes away.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use indexer::{Indexer, Indexers, ObjectKey, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::ObjectMeta;

fn cm(name: &str, color: &str) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some("ns".into()),
            name: Some(name.into()),
            labels: Some([("color".to_owned(), color.to_owned())].into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

/// An index by the color label that counts its calls.
fn counted_colors(calls: Arc<AtomicUsize>) -> Indexers<ConfigMap> {
    Indexers::new()
        .with_namespace()
        .with("color", move |o: &ConfigMap| {
            calls.fetch_add(1, Ordering::Relaxed);
            o.metadata
                .labels
                .iter()
                .flatten()
                .map(|(_, v)| v.clone())
                .collect()
        })
}

#[test]
fn the_index_function_runs_once_per_stored_state_and_never_on_removal() {
    let calls = Arc::new(AtomicUsize::new(0));
    let cache = Indexer::new(counted_colors(Arc::clone(&calls)));
    cache.add(cm("a", "red")).unwrap();
    cache.add(cm("b", "red")).unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 2);
    cache.update(cm("a", "blue")).unwrap();
    assert_eq!(
        calls.load(Ordering::Relaxed),
        3,
        "only the new state is computed"
    );
    cache.delete(cm("b", "whatever")).unwrap();
    cache.delete_key(&ObjectKey::namespaced("ns", "a").unwrap());
    assert_eq!(calls.load(Ordering::Relaxed), 3, "removals compute nothing");
    assert!(cache.list_index_func_values("color").unwrap().is_empty());
    assert!(cache.is_empty());
}

#[test]
fn an_update_unindexes_the_values_stored_at_insert_even_if_the_function_would_now_differ() {
    // A function whose answer for the same object changes over time: recomputing from the old
    // object on update would remove a value the object was never indexed under.
    let generation = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&generation);
    let cache = Indexer::new(Indexers::new().with("era", move |_: &ConfigMap| {
        vec![format!("era-{}", seen.load(Ordering::Relaxed))]
    }));
    cache.add(cm("a", "red")).unwrap();
    generation.store(1, Ordering::Relaxed);
    cache.add(cm("b", "red")).unwrap();
    generation.store(2, Ordering::Relaxed);
    cache.update(cm("a", "red")).unwrap();
    let mut values = cache.list_index_func_values("era").unwrap();
    values.sort();
    assert_eq!(values, ["era-1", "era-2"], "era-0 left with a's old state");
    assert_eq!(
        cache.index_keys("era", "era-2").unwrap(),
        [ObjectKey::namespaced("ns", "a").unwrap()]
    );
    cache.delete(cm("b", "red")).unwrap();
    assert_eq!(cache.list_index_func_values("era").unwrap(), ["era-2"]);
}

#[test]
fn indices_added_later_and_replaces_keep_values_for_every_object() {
    let calls = Arc::new(AtomicUsize::new(0));
    let cache = Indexer::new(Indexers::new().with("first", |o: &ConfigMap| {
        vec![o.metadata.name.clone().unwrap_or_default()]
    }));
    cache.add(cm("a", "red")).unwrap();
    cache.add(cm("b", "green")).unwrap();
    cache
        .add_indexers(counted_colors(Arc::clone(&calls)))
        .unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 2);
    cache.update(cm("a", "green")).unwrap();
    assert_eq!(cache.by_index("color", "green").unwrap().len(), 2);
    assert!(cache.by_index("color", "red").unwrap().is_empty());
    assert_eq!(cache.by_index("first", "a").unwrap().len(), 1);

    cache.replace(vec![cm("c", "red")], "2".into()).unwrap();
    cache.delete(cm("c", "ignored")).unwrap();
    for index in ["first", "color", "namespace"] {
        assert!(
            cache.list_index_func_values(index).unwrap().is_empty(),
            "{index}"
        );
    }
}
