//! Property tests of `ObjectKey` parsing: the properties the `object_key_parse` fuzz target
//! checks, on a few hundred generated inputs per run.

use indexer::fuzzing::check_object_key;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_parses_or_is_refused_cleanly(input in any::<String>()) {
        prop_assert_eq!(check_object_key(&input), Ok(()));
    }

    #[test]
    fn key_shaped_text_round_trips(input in "[a-z0-9/.-]{0,3}(/[a-z0-9.-]{0,12}){0,2}") {
        prop_assert_eq!(check_object_key(&input), Ok(()));
    }
}

#[test]
fn the_check_catches_what_it_claims() {
    assert_eq!(check_object_key("ns/name"), Ok(()));
    assert_eq!(check_object_key("a//b"), Ok(()));
    assert_eq!(check_object_key(""), Ok(()));
    assert!("ns/name".parse::<indexer::ObjectKey>().is_ok());
    assert!("a/b/c".parse::<indexer::ObjectKey>().is_err());
}
