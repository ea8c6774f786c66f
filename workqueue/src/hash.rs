//! The hasher of every per-item table.
//!
//! Every queue operation hashes its item once or twice, so the hasher is a large part of the
//! cost of an operation on short keys such as `namespace/name`. `foldhash` (hashbrown's own
//! default) is several times faster than std's SipHash on such keys; it is seeded randomly
//! per table, which keeps colliding keys hard to precompute.

/// The hasher of every per-item table of this crate.
pub(crate) type BuildHasher = foldhash::fast::RandomState;

/// An entry of a table that finds items by index into a slab: the index, and 32 bits of the
/// item's hash so that growing the table never reads the slab (nor re-hashes the item).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slot {
    pub(crate) index: u32,
    pub(crate) hash: u32,
}

impl Slot {
    /// The table hash of this entry.
    #[inline]
    pub(crate) fn table_hash(&self) -> u64 {
        table_hash(self.hash)
    }
}

/// The 32 bits of `hash` that a [`Slot`] keeps.
#[inline]
pub(crate) fn short_hash(hash: u64) -> u32 {
    (hash >> 32) as u32
}

/// Spreads a 32-bit hash over 64 bits (hashbrown reads both the low and the top bits).
#[inline]
pub(crate) fn table_hash(short: u32) -> u64 {
    u64::from(short).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}
