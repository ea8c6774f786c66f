//! Model-based property test: random add/update/delete/replace/resync/pop sequences against a
//! small reference model of DeltaFIFO; after every step the queue order, each key's deltas and
//! `has_synced` match. Popped deltas are applied to an indexer that serves as known objects.

use super::support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use deltafifo::{DeltaFifo, DeltaFifoOptions, DeltaType};
use indexer::{Indexer, Indexers, Store};
use proptest::prelude::*;
use support::{apply, cm, describe_all, rv_of};

/// (type, resource version of the object, tombstone).
type D = (DeltaType, Option<u64>, bool);

#[derive(Clone, Debug)]
enum Op {
    Add(u8),
    Update(u8),
    Delete(u8),
    Replace(Vec<u8>),
    Resync,
    Pop,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let name = 0u8..6;
    prop_oneof![
        3 => name.clone().prop_map(Op::Add),
        3 => name.clone().prop_map(Op::Update),
        2 => name.clone().prop_map(Op::Delete),
        1 => prop::collection::vec(name, 0..6).prop_map(Op::Replace),
        1 => Just(Op::Resync),
        4 => Just(Op::Pop),
    ]
}

/// The reference model, written straight from the specification.
#[derive(Default)]
struct Model {
    queue: Vec<String>,
    items: BTreeMap<String, Vec<D>>,
    populated: bool,
    initial: usize,
    /// What the consumer has applied: key -> resource version.
    known: BTreeMap<String, u64>,
}

impl Model {
    fn synced(&self) -> bool {
        self.populated && self.initial == 0
    }

    fn push(&mut self, key: &str, delta: D) {
        let deltas = self.items.entry(key.to_owned()).or_default();
        if deltas.is_empty() {
            self.queue.push(key.to_owned());
        }
        match (deltas.last(), delta) {
            (Some((DeltaType::Deleted, _, true)), (DeltaType::Deleted, ..)) => {
                *deltas.last_mut().unwrap() = delta
            }
            (Some((DeltaType::Deleted, _, false)), (DeltaType::Deleted, ..)) => {}
            _ => deltas.push(delta),
        }
    }

    fn delete(&mut self, key: &str, rv: u64, use_known: bool) {
        self.populated = true;
        let queued_or_known =
            self.items.contains_key(key) || (use_known && self.known.contains_key(key));
        if !queued_or_known {
            return;
        }
        self.push(key, (DeltaType::Deleted, Some(rv), false));
    }

    fn replace(&mut self, listed: &[(String, u64)], known_order: &[String], use_known: bool) {
        for (key, rv) in listed {
            self.push(key, (DeltaType::Replaced, Some(*rv), false));
        }
        let listed_keys: BTreeSet<&String> = listed.iter().map(|(k, _)| k).collect();
        for key in self.queue.clone() {
            if !listed_keys.contains(&key) {
                let last = self.items[&key].last().and_then(|d| d.1);
                self.push(&key, (DeltaType::Deleted, last, true));
            }
        }
        if use_known {
            for key in known_order {
                if !listed_keys.contains(key) && !self.items.contains_key(key) {
                    let rv = self.known.get(key).copied();
                    self.push(key, (DeltaType::Deleted, rv, true));
                }
            }
        }
        if !self.populated {
            self.populated = true;
            self.initial = self.queue.len();
        }
    }

    fn resync(&mut self, known_order: &[String]) {
        for key in known_order {
            if !self.items.contains_key(key) {
                let rv = self.known[key];
                self.push(key, (DeltaType::Sync, Some(rv), false));
            }
        }
    }

    /// Pops the front key: its deltas and `is_in_initial_list`, applied to `known`.
    fn pop(&mut self) -> Option<(Vec<D>, bool)> {
        if self.queue.is_empty() {
            return None;
        }
        let key = self.queue.remove(0);
        let deltas = self.items.remove(&key).unwrap_or_default();
        let initial = !self.synced();
        for (kind, rv, _) in &deltas {
            match (kind, rv) {
                (DeltaType::Deleted, _) => {
                    self.known.remove(&key);
                }
                (_, Some(rv)) => {
                    self.known.insert(key.clone(), *rv);
                }
                (_, None) => {}
            }
        }
        self.initial = self.initial.saturating_sub(1);
        Some((deltas, initial))
    }
}

fn name(n: u8) -> String {
    format!("obj-{n}")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn delta_fifo_matches_reference_model(use_known in any::<bool>(), ops in prop::collection::vec(op_strategy(), 1..80)) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let cache = Indexer::new(Indexers::new());
        let options = if use_known { DeltaFifoOptions::new().known_objects(Arc::new(cache.clone())) } else { DeltaFifoOptions::new() };
        let fifo = DeltaFifo::new(options);
        let mut model = Model::default();
        let mut rv = 0u64;
        let known_order = |cache: &Indexer<_>| cache.list_keys().iter().map(|k| k.to_string()).collect::<Vec<_>>();

        for op in ops {
            rv += 1;
            match op {
                Op::Add(n) => {
                    fifo.add(cm("ns", &name(n), rv)).unwrap();
                    model.populated = true;
                    model.push(&format!("ns/{}", name(n)), (DeltaType::Added, Some(rv), false));
                }
                Op::Update(n) => {
                    fifo.update(cm("ns", &name(n), rv)).unwrap();
                    model.populated = true;
                    model.push(&format!("ns/{}", name(n)), (DeltaType::Updated, Some(rv), false));
                }
                Op::Delete(n) => {
                    fifo.delete(cm("ns", &name(n), rv)).unwrap();
                    model.delete(&format!("ns/{}", name(n)), rv, use_known);
                }
                Op::Replace(names) => {
                    let listed: Vec<(String, u64)> = names.iter().enumerate().map(|(i, n)| (format!("ns/{}", name(*n)), rv * 100 + i as u64)).collect();
                    let objects = names.iter().zip(&listed).map(|(n, (_, rv))| cm("ns", &name(*n), *rv)).collect();
                    let order = known_order(&cache);
                    fifo.replace(objects, rv.to_string()).unwrap();
                    model.replace(&listed, &order, use_known);
                }
                Op::Resync => {
                    let order = known_order(&cache);
                    fifo.resync().unwrap();
                    if use_known {
                        model.resync(&order);
                    }
                }
                Op::Pop => {
                    let expected = model.pop();
                    if expected.is_some() {
                        let got = runtime.block_on(fifo.pop(|deltas, initial| {
                            let described = describe_all(&deltas);
                            apply(&cache, deltas);
                            (described, initial)
                        })).unwrap();
                        prop_assert_eq!(Some(got), expected);
                    }
                }
            }

            prop_assert_eq!(fifo.list_keys().iter().map(|k| k.to_string()).collect::<Vec<_>>(), model.queue.clone());
            let deltas: Vec<Vec<D>> = fifo.snapshot().iter().map(describe_all).collect();
            let expected: Vec<Vec<D>> = model.queue.iter().map(|k| model.items[k].clone()).collect();
            prop_assert_eq!(deltas, expected);
            prop_assert_eq!(fifo.has_synced(), model.synced());
            let cached: BTreeMap<String, u64> = cache.list().iter().map(|o| (indexer::key_of(o.as_ref()).unwrap().to_string(), rv_of(o))).collect();
            prop_assert_eq!(cached, model.known.clone());
        }
    }
}
