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
