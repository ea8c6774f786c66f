//! `indexer::ObjectKey`'s `FromStr`: a clean error or a key that displays as its input and
//! rebuilds from its parts (see `indexer::fuzzing::check_object_key`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    if let Err(violation) = indexer::fuzzing::check_object_key(input) {
        panic!("object key: {violation}");
    }
});
