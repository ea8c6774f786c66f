//! The checks the fuzz targets `admission_review` and `conversion_review` run
//! (`controller_runtime::webhook::fuzzing`), as property tests over arbitrary bytes and
//! over well-formed reviews with arbitrary contents.

use controller_runtime::webhook::fuzzing::{
    REFUSED_KEY, check_admission_review, check_conversion_review,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// A ConfigMap-ish object: sometimes another kind, sometimes with the refused key or labels.
fn object() -> impl Strategy<Value = Value> {
    (
        prop_oneof![Just("ConfigMap"), Just("Secret"), Just("")],
        proptest::collection::btree_map(
            prop_oneof![Just(REFUSED_KEY.to_owned()), "[a-z]{1,4}"],
            "[ -~]{0,6}",
            0..3,
        ),
        proptest::option::of(proptest::collection::btree_map(
            "[a-z./]{1,6}",
            "[a-z]{0,3}",
            0..2,
        )),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(|(kind, data, labels, immutable)| {
            json!({
                "apiVersion": "v1",
                "kind": kind,
                "metadata": {"name": "c", "namespace": "default", "labels": labels},
                "data": data,
                "immutable": immutable,
            })
        })
}

fn admission_review() -> impl Strategy<Value = Vec<u8>> {
    (
        "[a-f0-9-]{0,12}",
        prop_oneof![
            Just("CREATE"),
            Just("UPDATE"),
            Just("DELETE"),
            Just("CONNECT")
        ],
        proptest::option::of(object()),
        proptest::option::of(object()),
        any::<bool>(),
    )
        .prop_map(|(uid, operation, object, old_object, dry_run)| {
            let review = json!({
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "request": {
                    "uid": uid,
                    "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                    "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                    "operation": operation,
                    "userInfo": {"username": "fuzz"},
                    "name": "c",
                    "namespace": "default",
                    "object": object,
                    "oldObject": old_object,
                    "dryRun": dry_run,
                },
            });
            serde_json::to_vec(&review).unwrap()
        })
}

fn widget() -> impl Strategy<Value = Value> {
    (
        prop_oneof![
            Just("fuzz.example.com/v1"),
            Just("fuzz.example.com/v2"),
            Just("fuzz.example.com/v3"),
            Just("other.example.com/v1"),
        ],
        prop_oneof![Just("Widget"), Just("Gadget")],
        prop_oneof!["-?[0-9]{1,20}", "[ -~]{0,4}"],
        any::<i64>(),
        any::<bool>(),
    )
        .prop_map(|(api_version, kind, size, replicas, with_metadata)| {
            let mut widget = json!({
                "apiVersion": api_version,
                "kind": kind,
                "spec": {"size": size, "replicas": replicas},
            });
            if with_metadata {
                widget["metadata"] = json!({"name": "w", "labels": {"a": "b"}});
            }
            widget
        })
}

fn conversion_review() -> impl Strategy<Value = Vec<u8>> {
    (
        "[a-f0-9-]{0,12}",
        prop_oneof![Just("fuzz.example.com/v1"), Just("fuzz.example.com/v2")],
        proptest::collection::vec(widget(), 0..4),
    )
        .prop_map(|(uid, desired, objects)| {
            let review = json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "ConversionReview",
                "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
            });
            serde_json::to_vec(&review).unwrap()
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_get_a_well_formed_answer(body in proptest::collection::vec(any::<u8>(), 0..64)) {
        prop_assert_eq!(check_admission_review(&body), Ok(()));
        prop_assert_eq!(check_conversion_review(&body), Ok(()));
    }

    #[test]
    fn admission_reviews_are_answered_as_the_handlers_decide(body in admission_review()) {
        prop_assert_eq!(check_admission_review(&body), Ok(()));
    }

    #[test]
    fn conversion_reviews_convert_every_object_or_fail_whole(body in conversion_review()) {
        prop_assert_eq!(check_conversion_review(&body), Ok(()));
    }
}
