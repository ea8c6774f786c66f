//! The data behind an [`Indexer`](crate::Indexer): objects, their keys, and the indices.
//!
//! Objects live in a slab of slots. A hash table maps keys to slot ids without storing the key a
//! second time, and every index maps a value to the slot ids indexed under it, so an object costs
//! its key, one slot, one table entry and 4 bytes per index value. Lookups take a borrowed
//! [`ObjectKeyRef`], so updating a stored object allocates nothing for its key.
//!
//! The values a function index ([`IndexFunc::Values`]) computed for an object at insert are kept
//! in its slot, so an update or a delete un-indexes the object from those values instead of
//! calling the function on the old object again (client-go recomputes): an index function runs
//! once per stored object state, and never on an object that is going away (for compact objects,
//! recomputing would mean decoding them).

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::{DefaultHashBuilder, Equivalent, HashMap, HashTable};
use kube::Resource;

use crate::index::IndexFunc;
use crate::members::Members;
use crate::{Error, ObjectKey, ObjectKeyRef};

/// One stored object, its key, and its values in every function index.
pub(crate) struct Slot<K> {
    pub(crate) key: ObjectKey,
    pub(crate) obj: Arc<K>,
    values: StoredValues,
}

/// An object's values in each function index, at the index's position ([`Index::stored`]).
/// Empty (no allocation) when no function index is registered.
type StoredValues = Box<[Box<[Box<str>]>]>;

/// Slot ids per index value.
type Values = HashMap<Box<str>, Members>;

/// One named index: its function and the slot ids under each value.
struct Index<K> {
    name: String,
    func: IndexFunc<K>,
    values: Values,
    /// Where a function index keeps an object's values in its slot's [`StoredValues`]; `None`
    /// for the namespace and field indices, which read their value from the object.
    stored: Option<usize>,
}

/// Objects keyed by [`ObjectKey`], with incrementally maintained indices. Not synchronised:
/// [`Indexer`](crate::Indexer) wraps it in a lock.
pub(crate) struct Contents<K> {
    slots: Vec<Option<Slot<K>>>,
    free: Vec<u32>,
    by_key: HashTable<u32>,
    hasher: DefaultHashBuilder,
    indices: Vec<Index<K>>,
    /// How many function indices keep values in each slot.
    stored_count: usize,
}

impl<K> Contents<K> {
    pub(crate) fn new(indexers: BTreeMap<String, IndexFunc<K>>) -> Self {
        let mut stored_count = 0;
        let indices = indexers
            .into_iter()
            .map(|(name, func)| Index::new(name, func, &mut stored_count))
            .collect();
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            by_key: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            indices,
            stored_count,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.by_key.len()
    }

    fn slot_id(&self, key: ObjectKeyRef<'_>) -> Option<u32> {
        self.find(self.hasher.hash_one(key), key)
    }

    /// The slot of `key`, whose hash is `hash`.
    fn find(&self, hash: u64, key: ObjectKeyRef<'_>) -> Option<u32> {
        let slots = &self.slots;
        self.by_key
            .find(hash, |&id| {
                slot_key(slots, id).is_some_and(|k| key.equivalent(k))
            })
            .copied()
    }

    fn slot(&self, id: u32) -> Option<&Slot<K>> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }

    pub(crate) fn get(&self, key: ObjectKeyRef<'_>) -> Option<&Arc<K>> {
        self.slot_id(key)
            .and_then(|id| self.slot(id))
            .map(|slot| &slot.obj)
    }

    /// Every occupied slot, in slot order.
    pub(crate) fn slots(&self) -> impl Iterator<Item = &Slot<K>> {
        self.slots.iter().flatten()
    }

    /// Stores `obj` under `key`, replacing and re-indexing any previous object, which it returns.
    pub(crate) fn upsert_owned(
        &mut self,
        key: ObjectKey,
        obj: Arc<K>,
    ) -> Result<Option<Arc<K>>, Error> {
        let hash = self.hasher.hash_one(&key);
        match self.find(hash, key.as_key_ref()) {
            Some(id) => Ok(self.replace_in_slot(id, obj)),
            None => self.insert_new(hash, key, obj).map(|()| None),
        }
    }

    /// Puts `obj` into the occupied slot `id`, moves the slot between index values as needed, and
    /// returns the object it held.
    fn replace_in_slot(&mut self, id: u32, obj: Arc<K>) -> Option<Arc<K>> {
        let slot = self.slots.get_mut(id as usize).and_then(Option::as_mut)?;
        let old = std::mem::replace(&mut slot.obj, obj);
        update_indices(
            &mut self.indices,
            id,
            &slot.key,
            Some(&old),
            Some(&slot.obj),
            &mut slot.values,
        );
        Some(old)
    }

    /// Stores `obj` under `key`, whose hash is `hash` and which must not be stored yet.
    fn insert_new(&mut self, hash: u64, key: ObjectKey, obj: Arc<K>) -> Result<(), Error> {
        let id = match self.free.pop() {
            Some(id) => id,
            None => u32::try_from(self.slots.len()).map_err(|_| Error::Rejected {
                key: key.to_string(),
                source: "an indexer holds at most 4,294,967,295 objects".into(),
            })?,
        };
        let mut values = empty_values(self.stored_count);
        update_indices(&mut self.indices, id, &key, None, Some(&obj), &mut values);
        let slot = Some(Slot { key, obj, values });
        match self.slots.get_mut(id as usize) {
            Some(vacant) => *vacant = slot,
            None => self.slots.push(slot),
        }
        let (slots, hasher) = (&self.slots, &self.hasher);
        self.by_key.insert_unique(hash, id, |&other| {
            slot_key(slots, other).map_or(0, |k| hasher.hash_one(k))
        });
        Ok(())
    }

    /// Removes the object under `key` and un-indexes it; returns it if it was there.
    pub(crate) fn remove(&mut self, key: ObjectKeyRef<'_>) -> Option<Arc<K>> {
        let hash = self.hasher.hash_one(key);
        let slots = &self.slots;
        let entry = self
            .by_key
            .find_entry(hash, |&id| {
                slot_key(slots, id).is_some_and(|k| key.equivalent(k))
            })
            .ok()?;
        let (id, _) = entry.remove();
        let mut slot = self.slots.get_mut(id as usize).and_then(Option::take)?;
        update_indices(
            &mut self.indices,
            id,
            &slot.key,
            Some(&slot.obj),
            None,
            &mut slot.values,
        );
        self.free.push(id);
        Some(slot.obj)
    }

    /// Stores `obj` under `key` (cloned only for a new entry), replacing any previous object,
    /// which it returns.
    pub(crate) fn upsert_keyed(
        &mut self,
        key: &ObjectKey,
        obj: Arc<K>,
    ) -> Result<Option<Arc<K>>, Error> {
        let hash = self.hasher.hash_one(key);
        match self.find(hash, key.as_key_ref()) {
            Some(id) => Ok(self.replace_in_slot(id, obj)),
            None => self.insert_new(hash, key.clone(), obj).map(|()| None),
        }
    }

    /// Rebuilds the store and its indices from `items` (later duplicates win) and returns the
    /// previous objects, so the caller can release them after unlocking.
    pub(crate) fn replace_all(
        &mut self,
        items: Vec<(ObjectKey, Arc<K>)>,
    ) -> Result<Vec<Option<Slot<K>>>, Error> {
        let previous = std::mem::replace(&mut self.slots, Vec::with_capacity(items.len()));
        self.free.clear();
        self.by_key.clear();
        for index in &mut self.indices {
            index.values.clear();
        }
        for (key, obj) in items {
            self.upsert_owned(key, obj)?;
        }
        Ok(previous)
    }

    pub(crate) fn index_names(&self) -> impl Iterator<Item = &str> {
        self.indices.iter().map(|index| index.name.as_str())
    }

    fn index(&self, name: &str) -> Result<&Index<K>, Error> {
        self.indices
            .iter()
            .find(|index| index.name == name)
            .ok_or_else(|| Error::UnknownIndex(name.to_owned()))
    }

    /// Calls `visit` with every object indexed under `value` in index `name`.
    pub(crate) fn for_each_indexed(
        &self,
        name: &str,
        value: &str,
        mut visit: impl FnMut(&Slot<K>),
    ) -> Result<(), Error> {
        let index = self.index(name)?;
        if let Some(members) = index.values.get(value) {
            members.for_each(|id| {
                if let Some(slot) = self.slot(id) {
                    visit(slot);
                }
            });
        }
        Ok(())
    }

    /// How many objects are indexed under `value` in index `name`.
    pub(crate) fn count_indexed(&self, name: &str, value: &str) -> Result<usize, Error> {
        Ok(self.index(name)?.values.get(value).map_or(0, Members::len))
    }

    /// The values of `obj` under index `name`, computed with that index's function.
    pub(crate) fn index_values(&self, name: &str, obj: &K) -> Result<Vec<String>, Error> {
        Ok(self.index(name)?.func.values(obj))
    }

    /// Every value that currently has objects in index `name`.
    pub(crate) fn values_of(&self, name: &str) -> Result<Vec<String>, Error> {
        Ok(self
            .index(name)?
            .values
            .keys()
            .map(|v| v.to_string())
            .collect())
    }

    /// Registers new indices and builds them from the stored objects. Fails, changing nothing,
    /// when a name is already registered.
    pub(crate) fn add_indexers(
        &mut self,
        indexers: BTreeMap<String, IndexFunc<K>>,
    ) -> Result<(), Error> {
        if let Some(name) = indexers.keys().find(|name| self.index(name).is_ok()) {
            return Err(Error::IndexExists(name.clone()));
        }
        for (name, func) in indexers {
            let mut index = Index::new(name, func, &mut self.stored_count);
            for (id, slot) in self.slots.iter_mut().enumerate() {
                if let (Some(slot), Ok(id)) = (slot, u32::try_from(id)) {
                    let mut values = std::mem::take(&mut slot.values).into_vec();
                    values.resize_with(self.stored_count, Box::default);
                    slot.values = values.into_boxed_slice();
                    let stored = index.stored.and_then(|at| slot.values.get_mut(at));
                    reindex(&mut index, id, &slot.key, None, Some(&slot.obj), stored);
                }
            }
            self.indices.push(index);
        }
        Ok(())
    }
}

impl<K: Resource> Contents<K> {
    /// Stores `obj` under its own key, replacing and re-indexing any previous object, which it
    /// returns. Allocates a key only for an object that is not stored yet.
    pub(crate) fn upsert(&mut self, obj: Arc<K>) -> Result<Option<Arc<K>>, Error> {
        let key = ObjectKeyRef::of(obj.as_ref())?;
        let hash = self.hasher.hash_one(key);
        match self.find(hash, key) {
            Some(id) => Ok(self.replace_in_slot(id, obj)),
            None => {
                let key = key.to_owned()?;
                self.insert_new(hash, key, obj).map(|()| None)
            }
        }
    }
}

impl<K> Index<K> {
    /// An empty index; a function index takes the next storage position of `stored_count`.
    fn new(name: String, func: IndexFunc<K>, stored_count: &mut usize) -> Self {
        let stored = matches!(func, IndexFunc::Values(_)).then(|| {
            *stored_count += 1;
            *stored_count - 1
        });
        Self {
            name,
            func,
            values: Values::new(),
            stored,
        }
    }
}

/// The stored values of an object not indexed yet: one empty list per function index.
fn empty_values(stored_count: usize) -> StoredValues {
    std::iter::repeat_with(Box::default)
        .take(stored_count)
        .collect()
}

fn slot_key<K>(slots: &[Option<Slot<K>>], id: u32) -> Option<&ObjectKey> {
    slots
        .get(id as usize)
        .and_then(Option::as_ref)
        .map(|slot| &slot.key)
}

/// Moves slot `id` (stored under `key`) from the values of `old` to the values of `new` in
/// every index; `stored` holds the slot's function-index values (those of `old`), and is left
/// holding those of `new`.
fn update_indices<K>(
    indices: &mut [Index<K>],
    id: u32,
    key: &ObjectKey,
    old: Option<&K>,
    new: Option<&K>,
    stored: &mut StoredValues,
) {
    for index in indices {
        let stored = index.stored.and_then(|at| stored.get_mut(at));
        reindex(index, id, key, old, new, stored);
    }
}

/// Moves slot `id` (stored under `key`) from the values of `old` to the values of `new` in one
/// index. A function index un-indexes the values kept in `stored` (computed when `old` was
/// stored) and keeps there those of `new`.
fn reindex<K>(
    index: &mut Index<K>,
    id: u32,
    key: &ObjectKey,
    old: Option<&K>,
    new: Option<&K>,
    stored: Option<&mut Box<[Box<str>]>>,
) {
    let Index { func, values, .. } = index;
    match func {
        IndexFunc::Namespace(_) => match (old, new, key.namespace()) {
            (Some(_), Some(_), _) | (_, _, None) | (None, None, _) => {}
            (Some(_), None, Some(namespace)) => remove_value(values, id, namespace),
            (None, Some(_), Some(namespace)) => add_value(values, id, namespace),
        },
        IndexFunc::Field(field) => {
            let (old_value, new_value) = (old.and_then(|o| field(o)), new.and_then(|n| field(n)));
            if old_value != new_value {
                old_value
                    .into_iter()
                    .for_each(|value| remove_value(values, id, value));
                new_value
                    .into_iter()
                    .for_each(|value| add_value(values, id, value));
            }
        }
        IndexFunc::Values(compute) => {
            let Some(stored) = stored else {
                return;
            };
            let new_values: Box<[Box<str>]> = new
                .map(|n| compute(n).into_iter().map(String::into_boxed_str).collect())
                .unwrap_or_default();
            let old_values = std::mem::replace(stored, new_values);
            if old_values != *stored {
                old_values
                    .iter()
                    .for_each(|value| remove_value(values, id, value));
                stored.iter().for_each(|value| add_value(values, id, value));
            }
        }
    }
}

fn remove_value(values: &mut Values, id: u32, value: &str) {
    if let Some(members) = values.get_mut(value)
        && members.remove(id)
    {
        values.remove(value);
    }
}

fn add_value(values: &mut Values, id: u32, value: &str) {
    match values.get_mut(value) {
        Some(members) => members.insert(id),
        None => {
            values.insert(Box::from(value), Members::One(id));
        }
    }
}
