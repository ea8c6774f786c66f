//! Indexer benchmarks over 100k ConfigMaps with the namespace index and one label index:
//! add, update (with and without an index value change), `by_index`, and namespaced lists.
//! Before the timed runs, prints the indexer's own memory per object, measured with a counting
//! global allocator (bytes requested; allocator bookkeeping not included).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};

use criterion::{BatchSize, Criterion, Throughput, criterion_group};
use indexer::{Indexer, Indexers, Lister, NAMESPACE_INDEX, Store};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{Expression, ObjectMeta, Selector};

struct CountingAllocator;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

const OBJECTS: usize = 100_000;
const LABEL_INDEX: &str = "by-app";

fn object(i: usize, app: usize, rv: usize) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(format!("ns-{}", i % 100)),
            name: Some(format!("obj-{i}")),
            resource_version: Some(rv.to_string()),
            labels: Some([("app".to_string(), format!("app-{}", app % 10))].into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

fn objects(app_shift: usize, rv: usize) -> Vec<Arc<ConfigMap>> {
    (0..OBJECTS)
        .map(|i| object(i, i + app_shift, rv + i))
        .collect()
}

fn indexers() -> Indexers<ConfigMap> {
    Indexers::new()
        .with_namespace()
        .with(LABEL_INDEX, |cm: &ConfigMap| {
            cm.metadata
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| *k == "app")
                .map(|(_, v)| v.clone())
                .collect()
        })
}

fn filled(objs: &[Arc<ConfigMap>]) -> Indexer<ConfigMap> {
    let indexer = Indexer::new(indexers());
    for obj in objs {
        indexer.add(Arc::clone(obj)).expect("add");
    }
    indexer
}

fn report_memory() {
    let short_keys = objects(0, 1);
    // Keys longer than 23 bytes are not stored inline; typical of generated pod names.
    let long_keys: Vec<Arc<ConfigMap>> = (0..OBJECTS)
        .map(|i| {
            let mut obj = ConfigMap::clone(&object(i, i, i));
            obj.metadata.name = Some(format!("web-frontend-7d9f8c6b5-{i:08}"));
            Arc::new(obj)
        })
        .collect();
    for (keys, objs) in [
        ("short keys (ns-N/obj-N)", &short_keys),
        ("40-byte keys", &long_keys),
    ] {
        for (label, indexers) in [
            ("no index", Indexers::new()),
            ("namespace index", Indexers::new().with_namespace()),
            ("namespace + label index", indexers()),
        ] {
            let before = LIVE_BYTES.load(Ordering::Relaxed);
            let indexer = Indexer::new(indexers);
            for obj in objs {
                indexer.add(Arc::clone(obj)).expect("add");
            }
            let after = LIVE_BYTES.load(Ordering::Relaxed);
            let per_object = (after - before) as f64 / OBJECTS as f64;
            println!(
                "indexer memory overhead, {keys}, {label}: {per_object:.1} bytes/object beyond the Arc<K>"
            );
            black_box(indexer);
        }
    }
}

fn bench_indexer(c: &mut Criterion) {
    let base = objects(0, 1);
    let same_values = objects(0, 1_000_000);
    let moved_values = objects(1, 2_000_000);

    let mut group = c.benchmark_group("indexer");
    group.sample_size(20);
    group.throughput(Throughput::Elements(OBJECTS as u64));

    group.bench_function("add_100k", |b| {
        b.iter_batched(
            || Indexer::new(indexers()),
            |indexer| {
                for obj in &base {
                    indexer.add(Arc::clone(obj)).expect("add");
                }
                indexer
            },
            BatchSize::PerIteration,
        )
    });

    let indexer = filled(&base);
    group.bench_function("update_100k_same_index_values", |b| {
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            for obj in if flip { &same_values } else { &base } {
                indexer.update(Arc::clone(obj)).expect("update");
            }
        })
    });

    let indexer = filled(&base);
    group.bench_function("update_100k_label_index_value_changes", |b| {
        let mut flip = false;
        b.iter(|| {
            flip = !flip;
            for obj in if flip { &moved_values } else { &base } {
                indexer.update(Arc::clone(obj)).expect("update");
            }
        })
    });
    group.finish();

    let indexer = filled(&base);
    let namespaces: Vec<String> = (0..100).map(|n| format!("ns-{n}")).collect();
    let mut group = c.benchmark_group("indexer_reads");
    group.throughput(Throughput::Elements(1));
    group.bench_function("by_index_namespace_1000_objects", |b| {
        let mut n = 0;
        b.iter(|| {
            n = (n + 1) % namespaces.len();
            black_box(
                indexer
                    .by_index(NAMESPACE_INDEX, &namespaces[n])
                    .expect("index"),
            )
        })
    });
    group.bench_function("by_index_label_10000_objects", |b| {
        b.iter(|| black_box(indexer.by_index(LABEL_INDEX, "app-3").expect("index")))
    });
    let lister = Lister::new(indexer.clone());
    let everything = Selector::default();
    group.bench_function("namespaced_list_all_1000_objects", |b| {
        let mut n = 0;
        b.iter(|| {
            n = (n + 1) % namespaces.len();
            black_box(lister.namespace(&namespaces[n]).list(&everything))
        })
    });
    let app_7: Selector = Expression::Equal("app".into(), "app-7".into()).into();
    group.bench_function("namespaced_list_label_selector_100_of_1000", |b| {
        let mut n = 0;
        b.iter(|| {
            n = (n + 1) % namespaces.len();
            black_box(lister.namespace(&namespaces[n]).list(&app_7))
        })
    });
    group.finish();
}

criterion_group!(benches, bench_indexer);

fn main() {
    report_memory();
    benches();
    Criterion::default().configure_from_args().final_summary();
}
