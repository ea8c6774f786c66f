//! An `AdmissionReview` body answered by the webhook server's handling code (decode, the
//! handler contained, encode) for a validator and a defaulter: 400 exactly for bodies that do
//! not decode, the request's uid echoed, allowed and denied answers with consistent codes, a
//! defaulter's patch that applies to the object sent (see
//! `controller_runtime::webhook::fuzzing::check_admission_review`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    if let Err(violation) = controller_runtime::webhook::fuzzing::check_admission_review(body) {
        panic!("admission review: {violation}");
    }
});
