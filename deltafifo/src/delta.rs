//! The change records a [`DeltaFifo`](crate::DeltaFifo) hands out: [`Delta`], [`Deltas`] and the
//! deleted-object forms.

use std::sync::Arc;

use indexer::ObjectKey;

/// The kind of a [`Delta`], without its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was created.
    Added,
    /// The object changed.
    Updated,
    /// The object is gone.
    Deleted,
    /// The object was in a relist (it may or may not have changed).
    Replaced,
    /// A resync re-delivered the cached object; nothing changed on the server.
    Sync,
}

/// One change to one object. The object is the state after the change, except for
/// [`Delta::Deleted`], which carries the last known state.
#[derive(Debug)]
pub enum Delta<K> {
    /// The object was created.
    Added(Arc<K>),
    /// The object changed.
    Updated(Arc<K>),
    /// The object is gone.
    Deleted(DeletedObject<K>),
    /// The object was in a relist.
    Replaced(Arc<K>),
    /// A resync re-delivered the cached object.
    Sync(Arc<K>),
}

impl<K> Delta<K> {
    /// The kind of this delta.
    pub fn delta_type(&self) -> DeltaType {
        match self {
            Delta::Added(_) => DeltaType::Added,
            Delta::Updated(_) => DeltaType::Updated,
            Delta::Deleted(_) => DeltaType::Deleted,
            Delta::Replaced(_) => DeltaType::Replaced,
            Delta::Sync(_) => DeltaType::Sync,
        }
    }

    /// The object this delta carries, when there is one: a tombstone may have lost it.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            Delta::Added(obj) | Delta::Updated(obj) | Delta::Replaced(obj) | Delta::Sync(obj) => {
                Some(obj)
            }
            Delta::Deleted(deleted) => deleted.object(),
        }
    }
}

impl<K> Clone for Delta<K> {
    fn clone(&self) -> Self {
        match self {
            Delta::Added(obj) => Delta::Added(Arc::clone(obj)),
            Delta::Updated(obj) => Delta::Updated(Arc::clone(obj)),
            Delta::Deleted(deleted) => Delta::Deleted(deleted.clone()),
            Delta::Replaced(obj) => Delta::Replaced(Arc::clone(obj)),
            Delta::Sync(obj) => Delta::Sync(Arc::clone(obj)),
        }
    }
}

/// What a deletion knows about the deleted object.
#[derive(Debug)]
pub enum DeletedObject<K> {
    /// The deletion was observed (a watch event or a direct delete): the object's last state.
    Known(Arc<K>),
    /// The object vanished while the watch was down and a relist no longer contained it.
    /// (Boxed: tombstones are rare, and this keeps every [`Delta`] two words long.)
    Unknown(Box<DeletedFinalStateUnknown<K>>),
}

impl<K> DeletedObject<K> {
    /// The last known state of the object, if any is left.
    pub fn object(&self) -> Option<&Arc<K>> {
        match self {
            DeletedObject::Known(obj) => Some(obj),
            DeletedObject::Unknown(tombstone) => tombstone.obj.as_ref(),
        }
    }

    /// Whether this is a tombstone ([`DeletedObject::Unknown`]).
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeletedObject::Unknown(_))
    }
}

impl<K> Clone for DeletedObject<K> {
    fn clone(&self) -> Self {
        match self {
            DeletedObject::Known(obj) => DeletedObject::Known(Arc::clone(obj)),
            DeletedObject::Unknown(tombstone) => DeletedObject::Unknown(tombstone.clone()),
        }
    }
}

/// A tombstone: an object that was deleted while the watch was down, so its final state is
/// unknown (client-go's `DeletedFinalStateUnknown`).
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<K> {
    /// The key of the deleted object.
    pub key: ObjectKey,
    /// The last state the consumer knew, which may be stale, or nothing.
    pub obj: Option<Arc<K>>,
}

impl<K> Clone for DeletedFinalStateUnknown<K> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            obj: self.obj.clone(),
        }
    }
}

/// The deltas of one key, oldest first, as one [`pop`](crate::DeltaFifo::pop) hands them out.
/// Never empty.
#[derive(Debug)]
pub struct Deltas<K> {
    key: ObjectKey,
    /// The oldest delta, kept inline: most keys are popped with a single delta.
    first: Delta<K>,
    /// The newer deltas, oldest first.
    rest: Vec<Delta<K>>,
    /// The relist that last listed this key (0: none), for finding keys a relist left out.
    pub(crate) listed_in: u64,
}

/// The deltas of a [`Deltas`], oldest first, by value.
pub type DeltasIntoIter<K> =
    std::iter::Chain<std::iter::Once<Delta<K>>, std::vec::IntoIter<Delta<K>>>;

/// The deltas of a [`Deltas`], oldest first, by reference.
pub type DeltasIter<'a, K> =
    std::iter::Chain<std::iter::Once<&'a Delta<K>>, std::slice::Iter<'a, Delta<K>>>;

impl<K> Deltas<K> {
    pub(crate) fn new(key: ObjectKey, first: Delta<K>) -> Self {
        Self {
            key,
            first,
            rest: Vec::new(),
            listed_in: 0,
        }
    }

    /// The key all these deltas belong to.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// How many deltas there are (at least one).
    pub fn len(&self) -> usize {
        1 + self.rest.len()
    }

    /// Always false: a key is queued only with at least one delta.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The deltas, oldest first.
    pub fn iter(&self) -> DeltasIter<'_, K> {
        std::iter::once(&self.first).chain(self.rest.iter())
    }

    /// The oldest delta.
    pub fn oldest(&self) -> &Delta<K> {
        &self.first
    }

    /// The newest delta.
    pub fn newest(&self) -> &Delta<K> {
        self.rest.last().unwrap_or(&self.first)
    }

    /// The key and the deltas, oldest first.
    pub fn into_parts(self) -> (ObjectKey, DeltasIntoIter<K>) {
        (self.key, std::iter::once(self.first).chain(self.rest))
    }

    /// Appends `delta`, collapsing two consecutive deletions into one (client-go's `dedupDeltas`):
    /// when the older of the two is a tombstone the newer is kept, otherwise the older.
    pub(crate) fn push(&mut self, delta: Delta<K>) {
        let newest = self.rest.last_mut().unwrap_or(&mut self.first);
        match (&*newest, &delta) {
            (Delta::Deleted(older), Delta::Deleted(_)) if older.is_tombstone() => *newest = delta,
            (Delta::Deleted(_), Delta::Deleted(_)) => {}
            _ => self.rest.push(delta),
        }
    }
}

impl<K> Clone for Deltas<K> {
    fn clone(&self) -> Self {
        Self {
            key: self.key.clone(),
            first: self.first.clone(),
            rest: self.rest.clone(),
            listed_in: self.listed_in,
        }
    }
}

impl<K> IntoIterator for Deltas<K> {
    type Item = Delta<K>;
    type IntoIter = DeltasIntoIter<K>;

    fn into_iter(self) -> Self::IntoIter {
        self.into_parts().1
    }
}

impl<'a, K> IntoIterator for &'a Deltas<K> {
    type Item = &'a Delta<K>;
    type IntoIter = DeltasIter<'a, K>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_is_two_words() {
        assert_eq!(
            std::mem::size_of::<Delta<String>>(),
            2 * std::mem::size_of::<usize>()
        );
    }
}
