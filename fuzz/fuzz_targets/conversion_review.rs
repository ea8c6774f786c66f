//! A `ConversionReview` body answered by the webhook server's conversion handling (decode,
//! the hub-and-spoke conversions contained, encode): 400 exactly for bodies that do not
//! decode, the request's uid echoed, every object converted to the desired version with its
//! kind and metadata kept (and converting again a no-op), or the whole review failed with a
//! message (see `controller_runtime::webhook::fuzzing::check_conversion_review`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|body: &[u8]| {
    if let Err(violation) = controller_runtime::webhook::fuzzing::check_conversion_review(body) {
        panic!("conversion review: {violation}");
    }
});
