//! apiserver-sim's patch algorithms (JSON patch, merge patch, strategic merge, apply) on a
//! base document and a patch separated by the first newline: valid JSON or a 4xx error (or
//! upstream's 500 for an unknown `$patch` directive), never a panic (see
//! `apiserver_sim::fuzzing::check_patch`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(violation) = apiserver_sim::fuzzing::check_patch_bytes(data) {
        panic!("patch: {violation}");
    }
});
