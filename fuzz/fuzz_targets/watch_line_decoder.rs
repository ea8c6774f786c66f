//! `reflector::WatchLineDecoder` on arbitrary bytes: never a panic, never more buffered than the
//! line limit, and the same Pod events (or errors) however the body is cut into chunks (see
//! `reflector::fuzzing::check_watch_line_decoder` for how the input chooses limit and cuts).
#![no_main]

use k8s_openapi::api::core::v1::Pod;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    if let Err(violation) = reflector::fuzzing::check_watch_line_decoder::<Pod>(input) {
        panic!("watch line decoder: {violation}");
    }
});
