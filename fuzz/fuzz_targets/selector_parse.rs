//! apiserver-sim's label and field selector parsers: no panic, canonical form round trip,
//! consistent matching (see `apiserver_sim::fuzzing::check_label_selector`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &str| {
    use apiserver_sim::fuzzing::{check_field_selector, check_label_selector};
    if let Err(violation) = check_label_selector(input) {
        panic!("label selector: {violation}");
    }
    if let Err(violation) = check_field_selector(input) {
        panic!("field selector: {violation}");
    }
});
