//! Dry runs against webhooks with side effects (only configurations from before v1 can
//! still have them: v1 refuses `Some` and `Unknown`), checked on the dispatcher itself.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::admission::hooks::Rule;
use crate::admission::matching::Operation;

fn hook(side_effects: &str) -> Webhook {
    Webhook {
        name: "effects.example.com".into(),
        configuration: "c".into(),
        uid: ("c".into(), 0),
        // Never reached: the dry run fails before any call.
        client_config: json!({"url": "https://127.0.0.1:1/x"}),
        rules: vec![Rule {
            operations: vec!["*".into()],
            groups: vec!["*".into()],
            versions: vec!["*".into()],
            resources: vec!["*".into()],
            scope: "*".into(),
        }],
        fail_open: true,
        equivalent: true,
        namespace_selector: json!({}),
        object_selector: json!({}),
        side_effects: side_effects.into(),
        timeout: std::time::Duration::from_secs(10),
        reinvoke_if_needed: false,
        review_versions: vec!["v1".into()],
    }
}

fn attrs(dry_run: bool) -> Attributes {
    let info = crate::kinds::builtins::builtins()
        .into_iter()
        .find(|i| i.plural == "configmaps")
        .expect("configmaps");
    Attributes {
        operation: Operation::Create,
        info: Arc::clone(&info),
        version: "v1".into(),
        subresource: String::new(),
        name: "a".into(),
        namespace: "default".into(),
        object: Some(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})),
        old_object: None,
        dry_run,
        options: json!({}),
    }
}

/// apiserver mutating and validating dispatchers: on a dry run, a webhook whose
/// `sideEffects` is neither None nor NoneOnDryRun fails the request with 400 `admission
/// webhook "<name>" does not support dry run`, whatever its failurePolicy, and is not called.
#[tokio::test]
async fn dry_run_refuses_webhooks_with_side_effects() {
    let endpoints = ServiceEndpoints::default();
    let st = crate::store::State::new(
        Default::default(),
        crate::kinds::builtins::builtins(),
        Arc::new(tokio::sync::Notify::new()),
    );
    let a = attrs(true);
    let converter = Converter::new(&st, &a.info, &endpoints);
    let ctx = Context {
        endpoints: &endpoints,
        converter: &converter,
        namespace_labels: None,
        chaos: None,
    };
    for effects in ["Some", "Unknown"] {
        let mut warnings = Vec::new();
        let err = validate(&ctx, &[hook(effects)], &a, &mut warnings)
            .await
            .expect_err("refused");
        assert_eq!(err.code, 400);
        assert_eq!(
            err.status["message"],
            "admission webhook \"effects.example.com\" does not support dry run"
        );
        let mut m = attrs(true);
        let err = mutate(&ctx, &[hook(effects)], &mut m, &mut warnings)
            .await
            .expect_err("refused");
        assert_eq!(err.status["reason"], "BadRequest");
    }
    // Without dry run the same webhook is called (here: unreachable, failing open).
    let mut warnings = Vec::new();
    assert!(
        validate(&ctx, &[hook("Some")], &attrs(false), &mut warnings)
            .await
            .is_ok()
    );
}
