//! client-go's `the_real_fifo_test.go`, ported to [`InOrderFifo`].
//!
//! client-go tests its `RealFIFO` in two modes. Most of its cases run the mode that reads the
//! consumer's cache (`KnownObjects`) inside the fifo: there a relist queues one `Replaced` per
//! listed object and a tombstone per vanished one, and a resync one `Sync` per cached object.
//! This crate has only the mode Kubernetes 1.36 runs (`AtomicFIFO`): a relist and a resync are
//! one item each, and the consumer works the changes out against its own cache. Those cases
//! are ported by replaying the popped items into a cache seeded with client-go's known objects
//! (`support::resolve`): the changes a consumer sees that way are what client-go's fifo
//! queued, and they are compared with client-go's expectations.
//!
//! | client-go test | here | differs |
//! |---|---|---|
//! | `TestRealFIFO_basic` | [`two_producers_each_keep_their_order`](changes::two_producers_each_keep_their_order) | no |
//! | `TestRealFIFO_replaceWithDeleteDeltaIn` | [`a_relist_after_a_queued_delete_delivers_the_object_again`](relists::a_relist_after_a_queued_delete_delivers_the_object_again) | no |
//! | `TestRealFIFOW_ReplaceMakesDeletionsForObjectsOnlyInQueue` | [`relists_delete_what_only_the_queue_held`](relists::relists_delete_what_only_the_queue_held) | no (1) |
//! | `TestRealFIFO_addUpdate` | [`adds_updates_and_deletes_of_one_key_all_arrive`](changes::adds_updates_and_deletes_of_one_key_all_arrive) | no (2) |
//! | `TestRealFIFO_transformer` | [`objects_are_transformed_once_tombstones_never`](changes::objects_are_transformed_once_tombstones_never) | no |
//! | `TestRealFIFO_enqueueingNoLister`, `…WithLister` | [`every_delete_is_queued_whatever_the_consumer_knows`](changes::every_delete_is_queued_whatever_the_consumer_knows) | no |
//! | `TestRealFIFO_addReplace`, `TestRealFIFO_ReplaceAtomicPop` | [`an_add_then_a_relist_pop_in_order`](relists::an_add_then_a_relist_pop_in_order) | no |
//! | `TestRealFIFO_ResyncNonExisting`, `TestRealFIFO_Resync` | [`a_resync_re_delivers_what_the_cache_holds_when_it_is_reached`](resyncs::a_resync_re_delivers_what_the_cache_holds_when_it_is_reached) | no |
//! | `TestRealFIFO_DeleteExistingNonPropagated` | [`a_delete_after_an_add_is_queued`](changes::a_delete_after_an_add_is_queued) | no |
//! | `TestRealFIFO_ReplaceMakesDeletions`, `…Replaced` | [`relists_tombstone_what_vanished`](relists::relists_tombstone_what_vanished) | yes (3) |
//! | `TestRealFIFO_UpdateResyncRace` | [`a_resync_after_an_update_re_delivers_the_update`](resyncs::a_resync_after_an_update_re_delivers_the_update) | yes (4) |
//! | `TestRealFIFO_HasSyncedCorrectOnDeletion` | [`synced_once_the_initial_relist_with_its_tombstones_is_processed`](pops::synced_once_the_initial_relist_with_its_tombstones_is_processed) | yes (5) |
//! | `TestRealFIFO_detectLineJumpers` | [`no_key_jumps_the_line`](changes::no_key_jumps_the_line) | no |
//! | `TestRealFIFO_KeyOf` | [`every_item_carries_the_key_computed_at_write`](changes::every_item_carries_the_key_computed_at_write) | yes (6) |
//! | `TestRealFIFO_HasSynced` | [`has_synced_follows_the_first_relist`](pops::has_synced_follows_the_first_relist) | yes (5) |
//! | `TestRealFIFO_PopShouldUnblockWhenClosed` | [`close_unblocks_every_waiting_pop`](pops::close_unblocks_every_waiting_pop) | no |
//! | `TestRealFIFO_PopMultipleDeltaInBatch` | [`batches_are_cut_at_the_cap_a_repeated_key_and_the_initial_list`](pops::batches_are_cut_at_the_cap_a_repeated_key_and_the_initial_list) | yes (7) |
//! | `TestRealFIFO_PopBrokenItemsInBatch` | [`objects_without_a_key_are_refused_and_never_reach_a_batch`](pops::objects_without_a_key_are_refused_and_never_reach_a_batch) | yes (8) |
//! | `TestRealFIFO_ReplaceAtomic` | [`atomic_relists_queue_one_item_each_in_order`](relists::atomic_relists_queue_one_item_each_in_order) | no (1) |
//! | `TestRealFIFO_ResyncAtomic` | [`an_atomic_resync_is_one_item_after_what_came_before`](resyncs::an_atomic_resync_is_one_item_after_what_came_before) | no |
//!
//! 1. Bookmarks are queued in order but never handed to the consumer: once everything before
//!    one has been processed, [`InOrderFifo::synced_resource_version`] is its version. client-go
//!    hands them on as `Bookmark` deltas for the informer to record the same way.
//! 2. client-go waits 50 ms to see that nothing more arrives; here the fifo is checked empty.
//! 3. Tombstones of one relist come in key order. client-go's non-atomic fifo puts those of
//!    queued keys before those of known ones; its atomic mode takes the cache's key order,
//!    which Go's maps leave unspecified.
//! 4. client-go's non-atomic resync skips keys with queued changes, lest it deliver an older
//!    state than they do. A resync item is processed after the changes queued before it, so it
//!    delivers the newest state: the update is followed by a `Sync` of the same object.
//! 5. A relist is one item: an empty first relist syncs only once its item has been processed
//!    (client-go's non-atomic fifo queued nothing and synced at once), and a first relist of
//!    any size syncs after one pop (client-go counted one pop per object and tombstone).
//! 6. There is no `keyOf`: the key is computed once, when a change is written, and travels with
//!    the item; a tombstone's key is that of the cache entry it stands for.
//! 7. A relist is one item in a batch of its own: the size cap never splits it and updates
//!    never join it; an empty initial list is still an item.
//! 8. client-go keys items at pop time, so an item whose key fails sits in the queue; here the
//!    key is computed at write, and a write that cannot be keyed fails and queues nothing.

mod changes;
mod pops;
mod relists;
mod resyncs;

use super::support;

use std::sync::Arc;

use deltafifo::{InOrderFifo, Item};
use indexer::{Indexer, Indexers, Store};
use super::Obj;
use kube::Resource;
use support::{cm, resolve};

type Fifo = InOrderFifo<Obj>;

/// What a case does to a fresh fifo.
type Operations<'a> = Box<dyn Fn(&Fifo) + 'a>;

/// An object of client-go's tests: `mkFifoObj(name, rv)`.
fn obj(name: &str, rv: u64) -> Arc<Obj> {
    cm("ns", name, rv)
}

/// Pops one item, as client-go's `Pop` does.
async fn pop(fifo: &Fifo) -> (Item<Obj>, bool) {
    fifo.pop_batch(1, |batch| {
        let initial = batch.in_initial_list();
        (batch.into_items().remove(0), initial)
    })
    .await
    .expect("open fifo")
}

/// A consumer's cache holding client-go's known objects.
fn known(objects: &[Arc<Obj>]) -> Indexer<Obj> {
    let cache = Indexer::new(Indexers::new());
    for object in objects {
        cache.add(Arc::clone(object)).unwrap();
    }
    cache
}

/// Pops everything queued, one item at a time, into `cache`; returns the changes the consumer
/// saw (see `support::resolve`).
async fn drain_into(fifo: &Fifo, cache: &Indexer<Obj>) -> Vec<String> {
    let mut changes = Vec::new();
    while !fifo.is_empty() {
        let (item, _) = pop(fifo).await;
        changes.extend(resolve(cache, item));
    }
    changes
}

fn strings(expected: &[&str]) -> Vec<String> {
    expected.iter().map(|s| (*s).to_owned()).collect()
}
