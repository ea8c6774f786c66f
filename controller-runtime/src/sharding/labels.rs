//! The labels of the protocol, all under this framework's domain `sharding.kube-rt.dev` (the
//! design's original uses its author's domain; the shapes are the same):
//!
//! | label | on | value | meaning |
//! |---|---|---|---|
//! | `sharding.kube-rt.dev/ring` | shard Leases | the ring's name | this Lease announces a shard of that ring |
//! | `shard.sharding.kube-rt.dev/<ring>` | sharded objects | a shard's name | the object is assigned to that shard |
//! | `drain.sharding.kube-rt.dev/<ring>` | sharded objects | `true` | the sharder asks the assigned shard to let go of the object |
//!
//! The ring's name is part of the object labels' keys, so one object can belong to rings of
//! several controllers at once.

/// The domain every label of the protocol lives under.
pub const LABEL_DOMAIN: &str = "sharding.kube-rt.dev";

/// The label on a shard Lease naming its ring (`sharding.kube-rt.dev/ring`).
pub const RING_LABEL: &str = "sharding.kube-rt.dev/ring";

/// The annotation the sharder sets on a shard Lease once it has given the shard its share of the
/// ring: its value is the Lease's `acquireTime`, so it speaks of the current holding only (a
/// shard that restarts and acquires its Lease again waits for a new mark).
pub const ASSIGNED_ANNOTATION: &str = "sharding.kube-rt.dev/assigned";

/// The value the sharder sets on the [drain label](drain_label).
pub const DRAIN_VALUE: &str = "true";

/// The label holding the shard an object of `ring` is assigned to:
/// `shard.sharding.kube-rt.dev/<ring>`.
pub fn shard_label(ring: &str) -> String {
    format!("shard.{LABEL_DOMAIN}/{ring}")
}

/// The label by which the sharder asks an object's shard of `ring` to drain it:
/// `drain.sharding.kube-rt.dev/<ring>`.
pub fn drain_label(ring: &str) -> String {
    format!("drain.{LABEL_DOMAIN}/{ring}")
}

/// The label selector of `shard`'s objects in `ring` (`shard.sharding.kube-rt.dev/<ring>=<shard>`):
/// what the shard's caches and watches select, so it sees only the objects assigned to it.
pub fn shard_selector(ring: &str, shard: &str) -> String {
    format!("{}={shard}", shard_label(ring))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_labels_name_the_ring_in_their_key() {
        assert_eq!(shard_label("web"), "shard.sharding.kube-rt.dev/web");
        assert_eq!(drain_label("web"), "drain.sharding.kube-rt.dev/web");
        assert_ne!(shard_label("web"), shard_label("jobs"));
        assert!(RING_LABEL.starts_with(LABEL_DOMAIN));
        assert_eq!(
            shard_selector("web", "shard-0"),
            "shard.sharding.kube-rt.dev/web=shard-0"
        );
    }
}
