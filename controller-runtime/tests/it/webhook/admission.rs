//! Typed validators and defaulters, raw handlers, and the configuration objects that route to
//! them.

use base64::Engine as _;
use controller_runtime::webhook::{
    AdmissionHandler, AdmissionRequest, AdmissionResponse, ClientConfig, Defaulter, Denial,
    Error as WebhookError, Operation, Validation, Validator, Warnings, Webhook, admission_fn,
    crd_conversion,
};
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::{Value, json};

use super::support::{TestCa, TestServer, config_map, review};

const VALIDATE: &str = "/validate--v1-configmap";
const MUTATE: &str = "/mutate--v1-configmap";

/// Needs data; `mode` may not change; `protected` ConfigMaps may not be deleted; `legacy`
/// keys draw a warning; dry runs are flagged in a warning.
struct ConfigMapRules;

fn warnings_of(config: &ConfigMap, request: &AdmissionRequest) -> Warnings {
    let mut warnings = Warnings::new();
    if config
        .data
        .as_ref()
        .is_some_and(|data| data.contains_key("legacy"))
    {
        warnings.push("`legacy` is deprecated".to_owned());
    }
    if request.dry_run {
        warnings.push("dry run".to_owned());
    }
    warnings
}

impl Validator<ConfigMap> for ConfigMapRules {
    async fn validate_create(&self, config: &ConfigMap, request: &AdmissionRequest) -> Validation {
        if config.data.as_ref().is_none_or(|data| data.is_empty()) {
            return Err(Denial::new("a ConfigMap needs data")
                .with_code(422)
                .with_reason("Invalid")
                .with_warning("add a key"));
        }
        Ok(warnings_of(config, request))
    }

    async fn validate_update(
        &self,
        old: &ConfigMap,
        new: &ConfigMap,
        request: &AdmissionRequest,
    ) -> Validation {
        let mode = |config: &ConfigMap| {
            config
                .data
                .as_ref()
                .and_then(|data| data.get("mode").cloned())
        };
        if mode(old) != mode(new) {
            return Err(Denial::new(format!(
                "mode is immutable ({:?} -> {:?})",
                mode(old),
                mode(new)
            )));
        }
        Ok(warnings_of(new, request))
    }

    async fn validate_delete(&self, config: &ConfigMap, _request: &AdmissionRequest) -> Validation {
        if config
            .metadata
            .labels
            .as_ref()
            .is_some_and(|labels| labels.contains_key("protected"))
        {
            return Err(Denial::new("protected"));
        }
        Ok(Warnings::new())
    }
}

/// Labels every ConfigMap and gives it a `mode`; refuses the name `forbidden`.
struct ConfigMapDefaults;

impl Defaulter<ConfigMap> for ConfigMapDefaults {
    async fn default(
        &self,
        config: &mut ConfigMap,
        _request: &AdmissionRequest,
    ) -> Result<(), Denial> {
        if config.metadata.name.as_deref() == Some("forbidden") {
            return Err(Denial::new("that name is taken"));
        }
        config
            .metadata
            .labels
            .get_or_insert_default()
            .insert("defaulted".into(), "yes".into());
        config
            .data
            .get_or_insert_default()
            .entry("mode".into())
            .or_insert_with(|| "safe".into());
        Ok(())
    }
}

async fn server() -> TestServer {
    TestServer::start(|server| {
        server
            .register(Webhook::validator::<ConfigMap>(ConfigMapRules).operations([
                Operation::Create,
                Operation::Update,
                Operation::Delete,
            ]))
            .unwrap();
        server
            .register(Webhook::defaulter::<ConfigMap>(ConfigMapDefaults))
            .unwrap();
    })
    .await
}

#[tokio::test]
async fn a_validator_allows_denies_and_warns() {
    let server = server().await;
    let reply = server
        .post(
            VALIDATE,
            &review("CREATE", Some(config_map(json!({"a": "1"}))), None),
        )
        .await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(body["kind"], "AdmissionReview");
    let response = &body["response"];
    assert_eq!(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(response["allowed"], true);
    assert_eq!(response["status"]["code"], 200);
    assert!(response.get("warnings").is_none() && response.get("patch").is_none());

    let denied = server
        .post(
            VALIDATE,
            &review("CREATE", Some(config_map(json!({}))), None),
        )
        .await
        .response();
    assert_eq!(denied["allowed"], false);
    assert_eq!(denied["status"]["code"], 422);
    assert_eq!(denied["status"]["reason"], "Invalid");
    assert_eq!(denied["status"]["message"], "a ConfigMap needs data");
    assert_eq!(denied["warnings"], json!(["add a key"]));

    let warned = server
        .post(
            VALIDATE,
            &review("CREATE", Some(config_map(json!({"legacy": "x"}))), None),
        )
        .await
        .response();
    assert_eq!(warned["allowed"], true);
    assert_eq!(warned["warnings"], json!(["`legacy` is deprecated"]));
}

#[tokio::test]
async fn updates_see_old_and_new_deletes_the_old_object_and_dry_run_passes_through() {
    let server = server().await;
    let old = config_map(json!({"mode": "fast"}));
    let same = server
        .post(
            VALIDATE,
            &review(
                "UPDATE",
                Some(config_map(json!({"mode": "fast", "b": "2"}))),
                Some(old.clone()),
            ),
        )
        .await;
    assert_eq!(same.response()["allowed"], true);
    let changed = server
        .post(
            VALIDATE,
            &review(
                "UPDATE",
                Some(config_map(json!({"mode": "slow"}))),
                Some(old.clone()),
            ),
        )
        .await
        .response();
    assert_eq!(changed["allowed"], false);
    assert_eq!(
        changed["status"]["code"], 403,
        "a denial is Forbidden by default"
    );
    assert_eq!(
        changed["status"]["message"],
        r#"mode is immutable (Some("fast") -> Some("slow"))"#
    );

    let mut protected = config_map(json!({"a": "1"}));
    protected["metadata"]["labels"] = json!({"protected": "true"});
    let delete = server
        .post(VALIDATE, &review("DELETE", None, Some(protected)))
        .await
        .response();
    assert_eq!(
        (
            delete["allowed"].clone(),
            delete["status"]["message"].clone()
        ),
        (json!(false), json!("protected"))
    );
    let delete = server
        .post(VALIDATE, &review("DELETE", None, Some(old)))
        .await
        .response();
    assert_eq!(delete["allowed"], true);

    let mut dry_run = review("CREATE", Some(config_map(json!({"a": "1"}))), None);
    dry_run["request"]["dryRun"] = json!(true);
    assert_eq!(
        server.post(VALIDATE, &dry_run).await.response()["warnings"],
        json!(["dry run"])
    );
}

/// The decoded patch of a mutating response, applied to `object`.
fn patched(response: &Value, object: &Value) -> Value {
    assert_eq!(response["patchType"], "JSONPatch");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(
            response["patch"]
                .as_str()
                .expect("the patch is a base64 string"),
        )
        .unwrap();
    let patch: json_patch::Patch = serde_json::from_slice(&patch).unwrap();
    let mut object = object.clone();
    json_patch::patch(&mut object, &patch).unwrap();
    object
}

#[tokio::test]
async fn a_defaulter_answers_with_the_patch_of_its_changes_only() {
    let server = server().await;
    // `futureField` is unknown to the ConfigMap type; `creationTimestamp: null` does not
    // survive a typed round trip. Neither may be touched by the patch.
    let mut object = config_map(json!({"a": "1"}));
    object["futureField"] = json!({"keep": true});
    let response = server
        .post(MUTATE, &review("CREATE", Some(object.clone()), None))
        .await
        .response();
    assert_eq!(response["allowed"], true);
    let mut expected = object.clone();
    expected["metadata"]["labels"] = json!({"defaulted": "yes"});
    expected["data"]["mode"] = json!("safe");
    assert_eq!(patched(&response, &object), expected);

    // Nothing to default: no patch at all.
    let response = server
        .post(
            MUTATE,
            &review("UPDATE", Some(expected.clone()), Some(object)),
        )
        .await
        .response();
    assert_eq!(response["allowed"], true);
    assert!(
        response.get("patch").is_none() && response.get("patchType").is_none(),
        "{response}"
    );

    // Deletes are allowed without calling the defaulter; a denial refuses.
    let response = server
        .post(MUTATE, &review("DELETE", None, Some(expected)))
        .await
        .response();
    assert_eq!(response["allowed"], true);
    let mut forbidden = config_map(json!({}));
    forbidden["metadata"]["name"] = json!("forbidden");
    let response = server
        .post(MUTATE, &review("CREATE", Some(forbidden), None))
        .await
        .response();
    assert_eq!(
        (
            response["allowed"].clone(),
            response["status"]["message"].clone()
        ),
        (json!(false), json!("that name is taken"))
    );
}

#[tokio::test]
async fn a_review_of_another_kind_is_refused_with_400_in_the_review() {
    let server = server().await;
    let mut wrong = review("CREATE", Some(config_map(json!({"a": "1"}))), None);
    wrong["request"]["kind"] = json!({"group": "", "version": "v1", "kind": "Secret"});
    let response = server.post(VALIDATE, &wrong).await.response();
    assert_eq!(response["allowed"], false);
    assert_eq!(response["status"]["code"], 400);
    assert!(
        response["status"]["message"]
            .as_str()
            .unwrap()
            .contains("serves v1/ConfigMap, not v1/Secret")
    );
}

/// Allows members of `admins` and labels what they create (a hand-made patch).
struct AdminsOnly;

impl AdmissionHandler for AdminsOnly {
    async fn handle(&self, request: AdmissionRequest) -> AdmissionResponse {
        let admin = request
            .user_info
            .groups
            .iter()
            .flatten()
            .any(|group| group == "admins");
        let response = AdmissionResponse::from(&request);
        if !admin {
            return response.deny(format!(
                "{} is not an admin",
                request.user_info.username.unwrap_or_default()
            ));
        }
        let patch: json_patch::Patch = serde_json::from_value(
            json!([{"op": "add", "path": "/metadata/labels", "value": {"by": "admin"}}]),
        )
        .unwrap();
        response.with_patch(patch).unwrap()
    }
}

#[tokio::test]
async fn raw_handlers_answer_on_their_own_paths() {
    let server = TestServer::start(|server| {
        server
            .register(Webhook::raw("/admins", AdminsOnly).mutating(true))
            .unwrap();
        server
            .register(Webhook::raw(
                "/echo-dry-run",
                admission_fn(|request: AdmissionRequest| async move {
                    let mut response = AdmissionResponse::from(&request);
                    response.warnings = Some(vec![format!("dryRun={}", request.dry_run)]);
                    response
                }),
            ))
            .unwrap();
    })
    .await;
    let object = config_map(json!({"a": "1"}));
    let denied = server
        .post("/admins", &review("CREATE", Some(object.clone()), None))
        .await
        .response();
    assert_eq!(denied["allowed"], false);
    assert_eq!(
        denied["status"]["code"], 403,
        "a denial without a code is Forbidden"
    );
    assert_eq!(denied["status"]["message"], "admin is not an admin");
    let mut by_admin = review("CREATE", Some(object.clone()), None);
    by_admin["request"]["userInfo"]["groups"] = json!(["admins"]);
    let allowed = server.post("/admins", &by_admin).await.response();
    assert_eq!(allowed["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(
        patched(&allowed, &object)["metadata"]["labels"],
        json!({"by": "admin"})
    );

    let mut dry_run = review("DELETE", None, Some(object));
    dry_run["request"]["dryRun"] = json!(true);
    assert_eq!(
        server.post("/echo-dry-run", &dry_run).await.response()["warnings"],
        json!(["dryRun=true"])
    );
}

#[tokio::test]
async fn registration_checks_paths() {
    let server = controller_runtime::webhook::WebhookServer::new(Default::default());
    server
        .register(Webhook::validator::<ConfigMap>(ConfigMapRules))
        .unwrap();
    assert!(matches!(
        server.register(Webhook::validator::<ConfigMap>(ConfigMapRules)),
        Err(WebhookError::DuplicatePath(path)) if path == VALIDATE
    ));
    assert!(matches!(
        server.register(Webhook::validator::<ConfigMap>(ConfigMapRules).with_path("/bad path")),
        Err(WebhookError::InvalidPath { .. })
    ));
    server
        .register(Webhook::validator::<ConfigMap>(ConfigMapRules).with_path("/custom/validate"))
        .unwrap();
}

#[tokio::test]
async fn configuration_objects_route_to_the_registered_webhooks() {
    let server = controller_runtime::webhook::WebhookServer::new(Default::default());
    server
        .register(Webhook::validator::<ConfigMap>(ConfigMapRules))
        .unwrap();
    server
        .register(Webhook::defaulter::<ConfigMap>(ConfigMapDefaults))
        .unwrap();
    // A raw webhook without rules is not part of the configurations.
    server
        .register(Webhook::raw("/admins", AdminsOnly))
        .unwrap();
    let ca = TestCa::new().pem().as_bytes().to_vec();

    let validating = server.validating_webhook_configuration(
        "my-operator",
        &ClientConfig::url("https://127.0.0.1:9443/"),
        &ca,
    );
    let value = serde_json::to_value(&validating).unwrap();
    assert_eq!(value["metadata"]["name"], "my-operator");
    let webhooks = value["webhooks"].as_array().unwrap();
    assert_eq!(webhooks.len(), 1);
    let webhook = &webhooks[0];
    assert_eq!(webhook["name"], "vconfigmap-v1.core.kb.io");
    assert_eq!(
        webhook["clientConfig"]["url"],
        "https://127.0.0.1:9443/validate--v1-configmap"
    );
    assert_eq!(
        webhook["clientConfig"]["caBundle"],
        base64::engine::general_purpose::STANDARD.encode(&ca)
    );
    assert_eq!(
        webhook["rules"],
        json!([{
            "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
            "resources": ["configmaps"], "scope": "Namespaced",
        }])
    );
    assert_eq!(webhook["sideEffects"], "None");
    assert_eq!(webhook["admissionReviewVersions"], json!(["v1"]));
    assert_eq!(webhook["failurePolicy"], "Fail");
    assert_eq!(webhook["matchPolicy"], "Equivalent");

    let mutating = server.mutating_webhook_configuration(
        "my-operator",
        &ClientConfig::Service {
            namespace: "system".into(),
            name: "webhooks".into(),
            port: Some(8443),
        },
        &ca,
    );
    let value = serde_json::to_value(&mutating).unwrap();
    let webhook = &value["webhooks"][0];
    assert_eq!(webhook["name"], "mconfigmap-v1.core.kb.io");
    assert_eq!(
        webhook["clientConfig"]["service"],
        json!({
            "namespace": "system", "name": "webhooks", "path": "/mutate--v1-configmap", "port": 8443,
        })
    );
    assert!(webhook["clientConfig"].get("url").is_none());

    let conversion = serde_json::to_value(crd_conversion(
        &ClientConfig::service("system", "webhooks"),
        &ca,
    ))
    .unwrap();
    assert_eq!(conversion["strategy"], "Webhook");
    assert_eq!(
        conversion["webhook"]["conversionReviewVersions"],
        json!(["v1"])
    );
    assert_eq!(
        conversion["webhook"]["clientConfig"]["service"]["path"],
        "/convert"
    );
}
