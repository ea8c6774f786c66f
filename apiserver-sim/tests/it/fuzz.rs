//! Property test: arbitrary bodies, patches and query strings never panic the server; every
//! answer is either a success or a one-line `Status` error, and the server keeps serving.

use crate::common;

use apiserver_sim::ApiServer;
use proptest::prelude::*;
use serde_json::{Value, json};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-z/~0-9.-]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("metadata".to_string()),
                    Just("name".to_string()),
                    Just("namespace".to_string()),
                    Just("labels".to_string()),
                    Just("finalizers".to_string()),
                    Just("ownerReferences".to_string()),
                    Just("resourceVersion".to_string()),
                    Just("spec".to_string()),
                    Just("status".to_string()),
                    Just("op".to_string()),
                    Just("path".to_string()),
                    Just("value".to_string()),
                    Just("$patch".to_string()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..5,
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const PATHS: &[&str] = &[
    "/api/v1/namespaces/default/configmaps",
    "/api/v1/namespaces/default/configmaps/x",
    "/api/v1/namespaces/default/pods/x/status",
    "/apis/apps/v1/namespaces/default/deployments/x/scale",
    "/api/v1/namespaces/x",
    "/api/v1/namespaces/default/configmaps/x?dryRun=All",
];
const METHODS: &[&str] = &["POST", "PUT", "PATCH", "DELETE", "GET"];
const TYPES: &[&str] = &[
    "application/json",
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_requests_get_status_answers(
        body in arb_json(),
        path in 0..PATHS.len(),
        method in 0..METHODS.len(),
        ct in 0..TYPES.len(),
        query in "[a-zA-Z=&%0-9]{0,20}",
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let server = ApiServer::start().await.expect("server");
            // Something to patch and delete.
            let cm = json!({"metadata": {"name": "x"}, "data": {"a": "b"}});
            let json_ct = [("Content-Type", "application/json")];
            common::raw(&server, "POST", PATHS[0], &json_ct, cm.to_string().as_bytes()).await;
            let sep = if PATHS[path].contains('?') { '&' } else { '?' };
            let target = format!("{}{sep}{query}", PATHS[path]);
            let bytes = body.to_string();
            let r = common::raw(&server, METHODS[method], &target, &[("Content-Type", TYPES[ct])], bytes.as_bytes()).await;
            prop_assert!(r.body.ends_with('\n'), "newline-terminated: {:?}", r.body);
            if r.status >= 400 {
                let s = r.json();
                prop_assert_eq!(&s["kind"], "Status", "{}", r.body);
                prop_assert_eq!(s["code"].as_u64(), Some(u64::from(r.status)));
            }
            let h = common::raw(&server, "GET", "/healthz", &[], b"").await;
            prop_assert_eq!(h.status, 200);
            Ok(())
        })?;
    }
}

/// Text made of the selector grammar's pieces, so that many inputs parse.
fn selector_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        "[a-z]{1,3}",
        Just("metadata.name".to_string()),
        Just("metadata.namespace".to_string()),
        Just("status.phase".to_string()),
        Just("type".to_string()),
        Just("x.io/y".to_string()),
        Just("=".to_string()),
        Just("==".to_string()),
        Just("!=".to_string()),
        Just("!".to_string()),
        Just(",".to_string()),
        Just(" in (".to_string()),
        Just(" notin (".to_string()),
        Just(")".to_string()),
        Just(" ".to_string()),
        "[ -~]{0,2}",
    ];
    prop::collection::vec(piece, 0..10).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The `selector_parse` fuzz target's properties: no panic, canonical form round trip,
    /// consistent matching.
    #[test]
    fn selectors_parse_round_trip_and_match_consistently(
        input in prop_oneof![selector_text(), any::<String>()],
    ) {
        use apiserver_sim::fuzzing::{check_field_selector, check_label_selector};
        prop_assert_eq!(check_label_selector(&input), Ok(()));
        prop_assert_eq!(check_field_selector(&input), Ok(()));
    }

    /// The `patch_apply` fuzz target's properties on generated documents: every patch
    /// format gives valid JSON or a 4xx error (or upstream's 500 for an unknown `$patch`
    /// directive), merge patches are idempotent.
    #[test]
    fn patches_give_json_or_a_client_error(base in arb_json(), patch in arb_json()) {
        prop_assert_eq!(apiserver_sim::fuzzing::check_patch(&base, &patch), Ok(()));
    }

    /// JSON patches built from real operations (the generic `arb_json` rarely forms one).
    #[test]
    fn json_patch_operations_give_json_or_a_client_error(
        base in arb_json(),
        ops in prop::collection::vec(
            (
                prop_oneof![Just("add"), Just("remove"), Just("replace"), Just("move"),
                            Just("copy"), Just("test"), Just("bogus")],
                "(/(metadata|spec|labels|0|1|-|~0|~1|[a-z]{1,3})){0,3}",
                "(/(metadata|spec|0|-|[a-z]{1,2})){0,2}",
                arb_json(),
            ),
            0..4,
        ),
    ) {
        let patch = Value::Array(
            ops.into_iter()
                .map(|(op, path, from, value)| json!({"op": op, "path": path, "from": from, "value": value}))
                .collect(),
        );
        prop_assert_eq!(apiserver_sim::fuzzing::check_patch(&base, &patch), Ok(()));
    }
}

/// Found by the `patch_apply` fuzz target: an integer too large for `i64`/`u64` is a float,
/// and it must be stored exactly as parsed so that it serializes back to the same number
/// (correctly rounded parsing, serde_json's `float_roundtrip`).
#[test]
fn huge_integers_round_trip_through_patches() {
    let input =
        b"{\"e\\\\\":[230132222333222222222222222222222222222222222222222222222333367]}\n\n[]";
    assert_eq!(apiserver_sim::fuzzing::check_patch_bytes(input), Ok(()));
    assert_eq!(
        apiserver_sim::fuzzing::check_patch_bytes(
            b"{\"a\":1.0000000000000002e-308}\n{\"b\":9.999999999999999e22}"
        ),
        Ok(())
    );
}
