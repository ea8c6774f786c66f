//! The stable 64-bit hash that places shards and objects on the [`Ring`](super::Ring).
//!
//! Every replica of a ring (and the sharder) must compute the same position for the same string,
//! whatever its process, build or Rust version, so the hash is fixed by this file and never by
//! the standard library (whose `DefaultHasher` is explicitly allowed to change and is seeded per
//! process in `HashMap`). It is FNV-1a 64 over the UTF-8 bytes, followed by MurmurHash3's 64-bit
//! finaliser: FNV alone mixes the last bytes of a string poorly into the high bits, and virtual
//! node names differ only in their last bytes (`shard-a#17`, `shard-a#18`), which would bunch
//! their tokens together on the ring. The finaliser is a bijection, so it adds no collisions.

/// FNV-1a 64's offset basis.
const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64's prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `bytes`.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(FNV_OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME)
    })
}

/// MurmurHash3's `fmix64`: spreads every input bit over every output bit.
fn fmix64(mut value: u64) -> u64 {
    value ^= value >> 33;
    value = value.wrapping_mul(0xff51_afd7_ed55_8ccd);
    value ^= value >> 33;
    value = value.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    value ^ (value >> 33)
}

/// The ring position of `text`: FNV-1a 64, then `fmix64`. Stable across processes and versions.
pub(crate) fn stable_hash(text: &str) -> u64 {
    fmix64(fnv1a_64(text.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The published FNV-1a 64 test vectors: a change to the function would move every object.
    #[test]
    fn fnv1a_matches_the_published_vectors() {
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    /// `fmix64` fixes zero and is a bijection, so distinct FNV values stay distinct.
    #[test]
    fn finaliser_keeps_distinct_inputs_distinct() {
        assert_eq!(fmix64(0), 0);
        let outputs: std::collections::HashSet<u64> = (0..10_000u64).map(fmix64).collect();
        assert_eq!(outputs.len(), 10_000);
    }

    /// Strings that differ in their last byte land far apart in the high bits (which decide the
    /// ring position), unlike plain FNV-1a.
    #[test]
    fn last_byte_changes_reach_the_high_bits() {
        let high = |value: u64| value >> 56;
        let finalised: std::collections::HashSet<u64> = (0..10)
            .map(|index| high(stable_hash(&format!("shard-a#{index}"))))
            .collect();
        assert!(finalised.len() >= 8, "{finalised:?}");
    }
}
