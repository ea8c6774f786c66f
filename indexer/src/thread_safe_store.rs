//! The data behind an [`Indexer`](crate::Indexer): objects, their keys, and the indices.
//!
//! Objects live in a slab of slots. A hash table maps keys to slot ids without storing the key a
//! second time, and every index maps a value to the slot ids indexed under it, so an object costs
//! its key, one slot, one table entry and 4 bytes per index value. Lookups take a borrowed
//! [`ObjectKeyRef`], so updating a stored object allocates nothing for its key.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::sync::Arc;

use hashbrown::{DefaultHashBuilder, Equivalent, HashMap, HashTable};
use kube::Resource;

use crate::index::IndexFunc;
use crate::members::Members;
use crate::{Error, ObjectKey, ObjectKeyRef};

/// One stored object and its key.
pub(crate) struct Slot<K> {
    pub(crate) key: ObjectKey,
    pub(crate) obj: Arc<K>,
}

/// Slot ids per index value.
type Values = HashMap<Box<str>, Members>;

/// One named index: its function and the slot ids under each value.
struct Index<K> {
    name: String,
    func: IndexFunc<K>,
    values: Values,
}

/// Objects keyed by [`ObjectKey`], with incrementally maintained indices. Not synchronised:
/// [`Indexer`](crate::Indexer) wraps it in a lock.
pub(crate) struct Contents<K> {
    slots: Vec<Option<Slot<K>>>,
    free: Vec<u32>,
    by_key: HashTable<u32>,
    hasher: DefaultHashBuilder,
    indices: Vec<Index<K>>,
}

impl<K> Contents<K> {
    pub(crate) fn new(indexers: BTreeMap<String, IndexFunc<K>>) -> Self {
        let indices = indexers
            .into_iter()
            .map(|(name, func)| Index {
                name,
                func,
                values: Values::new(),
            })
            .collect();
        Self {
            slots: Vec::new(),
            free: Vec::new(),
            by_key: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            indices,
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
        update_indices(&mut self.indices, id, &key, None, Some(&obj));
        let slot = Some(Slot { key, obj });
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
        let slot = self.slots.get_mut(id as usize).and_then(Option::take)?;
        update_indices(&mut self.indices, id, &slot.key, Some(&slot.obj), None);
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
            let mut index = Index {
                name,
                func,
                values: Values::new(),
            };
            for (id, slot) in self.slots.iter().enumerate() {
                if let (Some(slot), Ok(id)) = (slot, u32::try_from(id)) {
                    reindex(&mut index, id, &slot.key, None, Some(&slot.obj));
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

fn slot_key<K>(slots: &[Option<Slot<K>>], id: u32) -> Option<&ObjectKey> {
    slots
        .get(id as usize)
        .and_then(Option::as_ref)
        .map(|slot| &slot.key)
}

/// Moves slot `id` (stored under `key`) from the values of `old` to the values of `new` in
/// every index.
fn update_indices<K>(
    indices: &mut [Index<K>],
    id: u32,
    key: &ObjectKey,
    old: Option<&K>,
    new: Option<&K>,
) {
    for index in indices {
        reindex(index, id, key, old, new);
    }
}

/// Moves slot `id` (stored under `key`) from the values of `old` to the values of `new` in one
/// index.
fn reindex<K>(index: &mut Index<K>, id: u32, key: &ObjectKey, old: Option<&K>, new: Option<&K>) {
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
            let old_values = old.map(|o| compute(o)).unwrap_or_default();
            let new_values = new.map(|n| compute(n)).unwrap_or_default();
            if old_values != new_values {
                old_values
                    .iter()
                    .for_each(|value| remove_value(values, id, value));
                new_values
                    .iter()
                    .for_each(|value| add_value(values, id, value));
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
