//! [`RecentlyDecoded`]: a bounded set of typed objects decoded from a compact cache.

use std::fmt;
use std::sync::Arc;

use hashbrown::HashMap;
use parking_lot::Mutex;

use crate::ObjectKey;

/// The objects a [`CompactLister`](super::CompactLister) decoded last, at most `capacity` of
/// them, each under its key and resourceVersion: a read of the same version is served without
/// decoding, a newer version replaces the entry. Eviction is CLOCK (an approximation of least
/// recently used): an entry read since the hand last passed gets a second chance.
///
/// For controllers that read the same objects again (a reconciler reading its primary object
/// and those it owns); it costs the memory of up to `capacity` decoded objects.
pub struct RecentlyDecoded<K> {
    capacity: usize,
    clock: Mutex<Clock<K>>,
}

struct Clock<K> {
    slots: HashMap<ObjectKey, usize>,
    entries: Vec<Entry<K>>,
    hand: usize,
}

struct Entry<K> {
    key: ObjectKey,
    version: Box<str>,
    obj: Arc<K>,
    referenced: bool,
}

impl<K> RecentlyDecoded<K> {
    /// An empty set that keeps at most `capacity` objects (none when 0).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            clock: Mutex::new(Clock {
                slots: HashMap::new(),
                entries: Vec::new(),
                hand: 0,
            }),
        }
    }

    /// The object kept under `key` if it is at `version`.
    pub fn get(&self, key: &ObjectKey, version: &str) -> Option<Arc<K>> {
        let mut clock = self.clock.lock();
        let at = *clock.slots.get(key)?;
        let entry = clock.entries.get_mut(at)?;
        if *entry.version != *version {
            return None;
        }
        entry.referenced = true;
        Some(Arc::clone(&entry.obj))
    }

    /// Keeps `obj`, decoded from the object under `key` at `version`, evicting another when
    /// full.
    pub fn insert(&self, key: &ObjectKey, version: &str, obj: Arc<K>) {
        if self.capacity == 0 {
            return;
        }
        let entry = Entry {
            key: key.clone(),
            version: Box::from(version),
            obj,
            referenced: false,
        };
        let mut clock = self.clock.lock();
        let clock = &mut *clock;
        if let Some(&at) = clock.slots.get(key) {
            if let Some(slot) = clock.entries.get_mut(at) {
                *slot = entry;
            }
            return;
        }
        if clock.entries.len() < self.capacity {
            clock.slots.insert(key.clone(), clock.entries.len());
            clock.entries.push(entry);
            return;
        }
        let at = clock.victim();
        if let Some(slot) = clock.entries.get_mut(at) {
            let evicted = std::mem::replace(slot, entry);
            clock.slots.remove(&evicted.key);
            clock.slots.insert(key.clone(), at);
        }
    }

    /// How many objects are kept.
    pub fn len(&self) -> usize {
        self.clock.lock().entries.len()
    }

    /// Whether none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<K> Clock<K> {
    /// The entry to evict: the first the hand reaches that was not read since it last passed
    /// (clearing the marks it passes). Called with at least one entry.
    fn victim(&mut self) -> usize {
        loop {
            let at = self.hand % self.entries.len().max(1);
            self.hand = at + 1;
            match self.entries.get_mut(at) {
                Some(entry) if entry.referenced => entry.referenced = false,
                _ => return at,
            }
        }
    }
}

impl<K> fmt::Debug for RecentlyDecoded<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecentlyDecoded")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> ObjectKey {
        ObjectKey::namespaced("ns", name).unwrap()
    }

    #[test]
    fn serves_only_the_version_it_holds() {
        let recent = RecentlyDecoded::new(2);
        recent.insert(&key("a"), "1", Arc::new("a1"));
        assert_eq!(recent.get(&key("a"), "1").as_deref(), Some(&"a1"));
        assert!(recent.get(&key("a"), "2").is_none());
        recent.insert(&key("a"), "2", Arc::new("a2"));
        assert_eq!(recent.get(&key("a"), "2").as_deref(), Some(&"a2"));
        assert!(recent.get(&key("a"), "1").is_none());
        assert_eq!(recent.len(), 1);
    }

    #[test]
    fn evicts_an_entry_not_read_since_the_hand_passed() {
        let recent = RecentlyDecoded::new(2);
        recent.insert(&key("a"), "1", Arc::new("a"));
        recent.insert(&key("b"), "1", Arc::new("b"));
        assert!(recent.get(&key("a"), "1").is_some());
        recent.insert(&key("c"), "1", Arc::new("c"));
        assert!(recent.get(&key("a"), "1").is_some(), "read: kept");
        assert!(recent.get(&key("b"), "1").is_none(), "not read: evicted");
        assert!(recent.get(&key("c"), "1").is_some());
        assert_eq!(recent.len(), 2);
    }

    #[test]
    fn a_set_of_capacity_zero_keeps_nothing() {
        let recent = RecentlyDecoded::new(0);
        recent.insert(&key("a"), "1", Arc::new(1));
        assert!(recent.is_empty());
    }
}
