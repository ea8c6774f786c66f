//! Several threads mutate and query one indexer at once: no deadlock, every answer is
//! self-consistent while writes run, and the final state equals what the writers last wrote.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use indexer::{Indexer, Indexers, Lister, ObjectKey, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{Expression, ObjectMeta, Selector};

const WRITERS: usize = 4;
const READERS: usize = 2;
const OPS_PER_WRITER: usize = 20_000;
const KEYS_PER_WRITER: usize = 200;
const APPS: [&str; 3] = ["x", "y", "z"];

fn object(writer: usize, slot: usize, app: &str) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(format!("ns-{}", slot % 5)),
            name: Some(format!("w{writer}-{slot}")),
            labels: Some([("app".to_string(), app.to_string())].into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

fn app_of(obj: &ConfigMap) -> Option<&str> {
    obj.metadata.labels.as_ref()?.get("app").map(String::as_str)
}

/// A small deterministic generator, so a failure reproduces.
fn next(state: &mut u64) -> usize {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 16) as usize
}

#[test]
fn concurrent_writers_and_readers_stay_consistent() {
    let indexer = Indexer::new(
        Indexers::new()
            .with_namespace()
            .with("by-app", |o: &ConfigMap| {
                app_of(o).into_iter().map(str::to_owned).collect()
            }),
    );
    let stop_readers = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel();

    let mut writers = Vec::new();
    for writer in 0..WRITERS {
        let indexer = indexer.clone();
        let done = done_tx.clone();
        writers.push(thread::spawn(move || {
            let mut rng = 0x9E37_79B9_7F4A_7C15 ^ (writer as u64 + 1);
            let mut last: BTreeMap<ObjectKey, Arc<ConfigMap>> = BTreeMap::new();
            for _ in 0..OPS_PER_WRITER {
                let slot = next(&mut rng) % KEYS_PER_WRITER;
                let obj = object(writer, slot, APPS[next(&mut rng) % APPS.len()]);
                let key = indexer::key_of(obj.as_ref()).unwrap();
                match next(&mut rng) % 10 {
                    0..=5 => {
                        indexer.update(obj.clone()).unwrap();
                        last.insert(key, obj);
                    }
                    _ => {
                        indexer.delete(obj).unwrap();
                        last.remove(&key);
                    }
                }
            }
            done.send(()).unwrap();
            last
        }));
    }

    let mut readers = Vec::new();
    for reader in 0..READERS {
        let indexer = indexer.clone();
        let stop = Arc::clone(&stop_readers);
        let done = done_tx.clone();
        readers.push(thread::spawn(move || {
            let lister = Lister::new(indexer.clone());
            let mut queries = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let app = APPS[(queries as usize + reader) % APPS.len()];
                for obj in indexer.by_index("by-app", app).unwrap() {
                    assert_eq!(
                        app_of(&obj),
                        Some(app),
                        "by_index returned an object under a stale value"
                    );
                }
                let ns = format!("ns-{}", queries % 5);
                let selector: Selector = Expression::Equal("app".into(), app.into()).into();
                for obj in lister.namespace(&ns).list(&selector) {
                    assert_eq!(obj.metadata.namespace.as_deref(), Some(ns.as_str()));
                    assert_eq!(app_of(&obj), Some(app));
                }
                queries += 1;
            }
            done.send(()).unwrap();
            queries
        }));
    }

    // Wait for the writers with a deadline, so a deadlock fails the test instead of hanging it.
    for _ in 0..WRITERS {
        done_rx
            .recv_timeout(Duration::from_secs(120))
            .expect("a writer did not finish: deadlock?");
    }
    stop_readers.store(true, Ordering::Relaxed);
    for _ in 0..READERS {
        done_rx
            .recv_timeout(Duration::from_secs(120))
            .expect("a reader did not finish: deadlock?");
    }

    let mut expected: BTreeMap<ObjectKey, Arc<ConfigMap>> = BTreeMap::new();
    for writer in writers {
        expected.extend(writer.join().unwrap());
    }
    for reader in readers {
        assert!(reader.join().unwrap() > 0, "a reader never ran a query");
    }

    let stored: BTreeSet<ObjectKey> = indexer.list_keys().into_iter().collect();
    assert_eq!(stored, expected.keys().cloned().collect());
    for (key, obj) in &expected {
        assert!(Arc::ptr_eq(&indexer.get_by_key(key).unwrap(), obj));
    }
    for app in APPS {
        let want: Vec<ObjectKey> = expected
            .iter()
            .filter(|(_, o)| app_of(o) == Some(app))
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(indexer.index_keys("by-app", app).unwrap(), want);
    }
    for ns in 0..5 {
        let ns = format!("ns-{ns}");
        let want: Vec<ObjectKey> = expected
            .keys()
            .filter(|k| k.namespace() == Some(ns.as_str()))
            .cloned()
            .collect();
        assert_eq!(indexer.index_keys("namespace", &ns).unwrap(), want);
    }
}
