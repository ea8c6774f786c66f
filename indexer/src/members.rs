//! The set of objects (by slot id) that share one index value.

use hashbrown::HashSet;

/// Slot ids indexed under one value. Most values of unique-ish indices (by uid, by owner) hold
/// a single object, so that case is stored inline without a hash set.
pub(crate) enum Members {
    One(u32),
    Many(HashSet<u32>),
}

impl Members {
    /// Adds `id`; adding an id that is already present changes nothing.
    pub(crate) fn insert(&mut self, id: u32) {
        match self {
            Members::One(existing) if *existing == id => {}
            Members::One(existing) => {
                let mut set = HashSet::with_capacity(2);
                set.insert(*existing);
                set.insert(id);
                *self = Members::Many(set);
            }
            Members::Many(set) => {
                set.insert(id);
            }
        }
    }

    /// Removes `id` and reports whether the set is now empty (and should be dropped).
    pub(crate) fn remove(&mut self, id: u32) -> bool {
        match self {
            Members::One(existing) => *existing == id,
            Members::Many(set) => {
                set.remove(&id);
                if set.len() == 1
                    && let Some(&last) = set.iter().next()
                {
                    *self = Members::One(last);
                }
                matches!(self, Members::Many(set) if set.is_empty())
            }
        }
    }

    /// Calls `visit` with every id.
    pub(crate) fn for_each(&self, mut visit: impl FnMut(u32)) {
        match self {
            Members::One(id) => visit(*id),
            Members::Many(set) => set.iter().for_each(|&id| visit(id)),
        }
    }

    /// How many ids the set holds.
    pub(crate) fn len(&self) -> usize {
        match self {
            Members::One(_) => 1,
            Members::Many(set) => set.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(members: &Members) -> Vec<u32> {
        let mut out = Vec::new();
        members.for_each(|id| out.push(id));
        out.sort();
        out
    }

    #[test]
    fn grows_from_one_and_shrinks_back() {
        let mut m = Members::One(1);
        m.insert(1);
        assert_eq!(ids(&m), [1]);
        m.insert(2);
        m.insert(3);
        assert_eq!(ids(&m), [1, 2, 3]);
        assert!(!m.remove(2));
        assert!(!m.remove(3));
        assert!(matches!(m, Members::One(1)));
        assert!(m.remove(1));
    }

    #[test]
    fn removing_an_absent_id_keeps_the_set() {
        let mut m = Members::One(1);
        assert!(!m.remove(7));
        assert_eq!(m.len(), 1);
    }
}
