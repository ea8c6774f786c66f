//! Sharding: spreading one controller's objects over several replicas that all work at once,
//! instead of one elected leader doing everything.
//!
//! The protocol is the one of kubernetes-controller-sharding (Tim Ebert's design), with labels
//! under this framework's own domain. A *ring* is a named set of replicas (*shards*) of one
//! controller. Every object of the ring's kinds is assigned to exactly one shard, chosen by
//! consistent hashing of the object's identity over the shards alive at the time; a shard's
//! caches and watches see only the objects assigned to it.
//!
//! # Consistent hashing
//!
//! [`Ring`] places [`VIRTUAL_NODES_PER_SHARD`] tokens per shard on a 64-bit circle with a
//! stable hash (FNV-1a 64 with MurmurHash3's finaliser) (the same in every process and build); an object belongs to the shard of
//! the next token after the object key's position. With that many virtual nodes the shards'
//! shares stay within a few percent of an even split, and a shard joining or leaving moves only
//! the objects that go to it or came from it, about `objects ÷ shards`.

mod hash;
mod ring;

pub use ring::{Ring, ShardName, VIRTUAL_NODES_PER_SHARD};
