//! `indexer::compact::Compact<Pod>` from arbitrary bytes: never a panic; whatever decodes as a
//! typed Pod is cached compactly with the same eager metadata and reads back as exactly that
//! Pod in every encoding, managedFields kept or dropped (see
//! `indexer::fuzzing::check_compact_round_trip`). Seeds: `fuzz/seeds/compact_round_trip/`
//! (checked in; the indexer's property tests also run them; `fuzz/corpus/` is the fuzzer's own,
//! untracked): `cargo fuzz run compact_round_trip fuzz/corpus/compact_round_trip
//! fuzz/seeds/compact_round_trip`.
#![no_main]

use k8s_openapi::api::core::v1::Pod;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if let Err(violation) = indexer::fuzzing::check_compact_round_trip::<Pod>(input) {
        panic!("compact round trip: {violation}");
    }
});
