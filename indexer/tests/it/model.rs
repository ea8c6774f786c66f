//! Model-based property test: after every operation, every index and lister answer equals a
//! brute-force recomputation from the objects the model says are stored.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use indexer::{Error, Indexer, Indexers, Lister, ObjectKey, Store, namespace_index_fn};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{Expression, ObjectMeta, Selector, SelectorExt};
use proptest::prelude::*;

const NAMESPACES: [Option<&str>; 4] = [Some("a"), Some("b"), Some("c"), None];

type Labels = BTreeMap<String, String>;

fn object(ns: Option<&str>, name: u8, labels: Labels) -> Arc<ConfigMap> {
    Arc::new(ConfigMap {
        metadata: ObjectMeta {
            namespace: ns.map(Into::into),
            name: Some(format!("obj-{name}")),
            labels: (!labels.is_empty()).then_some(labels),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    })
}

fn labels_of(obj: &ConfigMap) -> Labels {
    obj.metadata.labels.clone().unwrap_or_default()
}

/// The index functions the test can register, by name.
fn index_fn(name: &str) -> fn(&ConfigMap) -> Vec<String> {
    match name {
        "by-app" => |o| {
            o.metadata
                .labels
                .iter()
                .flatten()
                .filter(|(k, _)| *k == "app")
                .map(|(_, v)| v.clone())
                .collect()
        },
        // Multi-valued: every label as "key=value".
        "by-label" => |o| {
            o.metadata
                .labels
                .iter()
                .flatten()
                .map(|(k, v)| format!("{k}={v}"))
                .collect()
        },
        // Constant-valued for most objects, to exercise big value sets.
        _ => |o| {
            vec![format!(
                "len-{}",
                o.metadata.name.as_deref().unwrap_or_default().len()
            )]
        },
    }
}

const OPTIONAL_INDICES: [&str; 3] = ["by-app", "by-label", "by-name-len"];

#[derive(Clone, Debug)]
enum Op {
    Add(Arc<ConfigMap>),
    Update(Arc<ConfigMap>),
    Delete(Arc<ConfigMap>),
    Replace(Vec<Arc<ConfigMap>>),
    AddIndexer(&'static str),
}

fn labels_strategy() -> impl Strategy<Value = Labels> {
    (
        prop::option::of(prop::sample::select(vec!["x", "y", "z"])),
        prop::option::of(prop::sample::select(vec!["1", "2"])),
    )
        .prop_map(|(app, tier)| {
            let mut labels = Labels::new();
            if let Some(app) = app {
                labels.insert("app".into(), app.into());
            }
            if let Some(tier) = tier {
                labels.insert("tier".into(), tier.into());
            }
            labels
        })
}

fn object_strategy() -> impl Strategy<Value = Arc<ConfigMap>> {
    (
        prop::sample::select(NAMESPACES.to_vec()),
        0u8..12,
        labels_strategy(),
    )
        .prop_map(|(ns, name, labels)| object(ns, name, labels))
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => object_strategy().prop_map(Op::Add),
        4 => object_strategy().prop_map(Op::Update),
        3 => object_strategy().prop_map(Op::Delete),
        1 => prop::collection::vec(object_strategy(), 0..20).prop_map(Op::Replace),
        1 => prop::sample::select(OPTIONAL_INDICES.to_vec()).prop_map(Op::AddIndexer),
    ]
}

fn selectors() -> Vec<Selector> {
    vec![
        Selector::default(),
        Expression::Equal("app".into(), "x".into()).into(),
        Expression::In("app".into(), ["x".to_string(), "y".to_string()].into()).into(),
        Expression::DoesNotExist("tier".into()).into(),
        Selector::from_iter([
            Expression::NotEqual("tier".into(), "1".into()),
            Expression::Exists("app".into()),
        ]),
    ]
}

struct Model {
    objects: BTreeMap<ObjectKey, Arc<ConfigMap>>,
    indices: BTreeSet<&'static str>,
}

impl Model {
    fn values(&self, index: &str, obj: &ConfigMap) -> Vec<String> {
        if index == "namespace" {
            namespace_index_fn::<ConfigMap>()(obj)
        } else {
            index_fn(index)(obj)
        }
    }

    fn keys_with_value(&self, index: &str, value: &str) -> Vec<ObjectKey> {
        self.objects
            .iter()
            .filter(|(_, o)| self.values(index, o).iter().any(|v| v == value))
            .map(|(k, _)| k.clone())
            .collect()
    }

    fn all_values(&self, index: &str) -> BTreeSet<String> {
        self.objects
            .values()
            .flat_map(|o| self.values(index, o))
            .collect()
    }
}

fn keys_of(objs: &[Arc<ConfigMap>]) -> BTreeSet<ObjectKey> {
    objs.iter()
        .map(|o| indexer::key_of(o.as_ref()).unwrap())
        .collect()
}

fn check(indexer: &Indexer<ConfigMap>, model: &Model, probes: &[Arc<ConfigMap>]) {
    let stored: BTreeSet<_> = indexer.list_keys().into_iter().collect();
    assert_eq!(
        stored,
        model.objects.keys().cloned().collect::<BTreeSet<_>>()
    );
    assert_eq!(indexer.len(), model.objects.len());
    for (key, obj) in &model.objects {
        let got = indexer.get_by_key(key).expect("stored object");
        assert!(Arc::ptr_eq(&got, obj), "{key} holds a stale object");
    }

    let registered: BTreeSet<String> = indexer.index_names().into_iter().collect();
    let expected: BTreeSet<String> = model.indices.iter().map(|s| s.to_string()).collect();
    assert_eq!(registered, expected);

    for index in ["namespace"].into_iter().chain(OPTIONAL_INDICES) {
        if !model.indices.contains(index) {
            assert!(matches!(
                indexer.by_index(index, "x"),
                Err(Error::UnknownIndex(_))
            ));
            assert!(matches!(
                indexer.index_keys(index, "x"),
                Err(Error::UnknownIndex(_))
            ));
            assert!(matches!(
                indexer.list_index_func_values(index),
                Err(Error::UnknownIndex(_))
            ));
            continue;
        }
        let values: BTreeSet<String> = indexer
            .list_index_func_values(index)
            .unwrap()
            .into_iter()
            .collect();
        assert_eq!(values, model.all_values(index), "values of index {index}");
        for value in values.iter().map(String::as_str).chain(["no-such-value"]) {
            let expected = model.keys_with_value(index, value);
            assert_eq!(
                indexer.index_keys(index, value).unwrap(),
                expected,
                "index_keys({index}, {value})"
            );
            assert_eq!(
                keys_of(&indexer.by_index(index, value).unwrap()),
                expected.into_iter().collect()
            );
        }
        for probe in probes {
            let probe_values = model.values(index, probe);
            let expected: BTreeSet<ObjectKey> = model
                .objects
                .iter()
                .filter(|(_, o)| {
                    model
                        .values(index, o)
                        .iter()
                        .any(|v| probe_values.contains(v))
                })
                .map(|(k, _)| k.clone())
                .collect();
            let got = indexer.index(index, probe).unwrap();
            assert_eq!(got.len(), expected.len(), "index() returned duplicates");
            assert_eq!(keys_of(&got), expected);
        }
    }

    let lister = Lister::new(indexer.clone());
    for selector in selectors() {
        let selected = |o: &&Arc<ConfigMap>| selector.matches(&labels_of(o));
        let all: BTreeSet<_> = model
            .objects
            .values()
            .filter(selected)
            .map(|o| indexer::key_of(o.as_ref()).unwrap())
            .collect();
        assert_eq!(keys_of(&lister.list(&selector)), all);
        for ns in NAMESPACES.iter().flatten() {
            let expected: BTreeSet<_> = all
                .iter()
                .filter(|k| k.namespace() == Some(*ns))
                .cloned()
                .collect();
            let got = lister.namespace(ns).list(&selector);
            assert_eq!(got.len(), expected.len());
            assert_eq!(keys_of(&got), expected);
        }
    }
    for ns in NAMESPACES.iter().flatten() {
        for name in 0..12 {
            let key = ObjectKey::namespaced(ns, &format!("obj-{name}")).unwrap();
            assert_eq!(
                lister.namespace(ns).get(key.name()).is_some(),
                model.objects.contains_key(&key)
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn indices_and_listers_match_brute_force(
        with_namespace in any::<bool>(),
        ops in prop::collection::vec(op_strategy(), 1..60),
        probes in prop::collection::vec(object_strategy(), 3),
    ) {
        let mut indexers = Indexers::new();
        let mut model = Model { objects: BTreeMap::new(), indices: BTreeSet::new() };
        if with_namespace {
            indexers = indexers.with_namespace();
            model.indices.insert("namespace");
        }
        let indexer = Indexer::new(indexers);
        for op in ops {
            match op {
                Op::Add(obj) => {
                    indexer.add(obj.clone()).unwrap();
                    model.objects.insert(indexer::key_of(obj.as_ref()).unwrap(), obj);
                }
                Op::Update(obj) => {
                    indexer.update(obj.clone()).unwrap();
                    model.objects.insert(indexer::key_of(obj.as_ref()).unwrap(), obj);
                }
                Op::Delete(obj) => {
                    indexer.delete(obj.clone()).unwrap();
                    model.objects.remove(&indexer::key_of(obj.as_ref()).unwrap());
                }
                Op::Replace(objs) => {
                    indexer.replace(objs.clone(), "42".into()).unwrap();
                    model.objects = objs.into_iter().map(|o| (indexer::key_of(o.as_ref()).unwrap(), o)).collect();
                }
                Op::AddIndexer(name) => {
                    let indexers = match name {
                        // Registered as a borrowed field index; the model computes it as owned values.
                        "by-app" => Indexers::new().with_field(name, |o: &ConfigMap| o.metadata.labels.as_ref()?.get("app").map(String::as_str)),
                        _ => Indexers::new().with(name, index_fn(name)),
                    };
                    let result = indexer.add_indexers(indexers);
                    if model.indices.insert(name) {
                        prop_assert!(result.is_ok());
                    } else {
                        prop_assert!(matches!(result, Err(Error::IndexExists(_))));
                    }
                }
            }
            check(&indexer, &model, &probes);
        }
    }
}

#[test]
fn replace_with_an_unnamed_object_changes_nothing() {
    let indexer = Indexer::new(Indexers::new().with_namespace());
    indexer.add(object(Some("a"), 1, Labels::new())).unwrap();
    let mut unnamed = ConfigMap::default();
    unnamed.metadata.namespace = Some("a".into());
    let result = indexer.replace(
        vec![object(Some("b"), 2, Labels::new()), Arc::new(unnamed)],
        "7".into(),
    );
    assert!(matches!(result, Err(Error::MissingName)));
    assert_eq!(
        indexer.list_keys(),
        [ObjectKey::namespaced("a", "obj-1").unwrap()]
    );
}
