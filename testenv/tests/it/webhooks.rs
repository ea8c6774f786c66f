//! Webhooks: the environment's certificate, a manager's webhook server, and the configurations
//! that route the simulator to it.

use controller_runtime::webhook::{
    AdmissionRequest, Denial, Validation, Validator, Warnings, Webhook,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use testenv::{Error, TestEnv};

/// Refuses ConfigMaps with a `forbidden` key.
struct NoForbiddenKey;

impl Validator<ConfigMap> for NoForbiddenKey {
    async fn validate_create(&self, object: &ConfigMap, _: &AdmissionRequest) -> Validation {
        match object
            .data
            .as_ref()
            .is_some_and(|data| data.contains_key("forbidden"))
        {
            true => Err(Denial::new("data.forbidden: not allowed")),
            false => Ok(Warnings::new()),
        }
    }
}

fn config_map(name: &str, key: &str) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(name.to_owned());
    cm.data = Some([(key.to_owned(), "1".to_owned())].into());
    cm
}

#[tokio::test]
async fn the_simulator_calls_a_validator_of_a_running_manager() {
    let env = TestEnv::builder().webhooks().start().await.unwrap();
    let manager = env.manager();
    manager
        .add_webhook(Webhook::validator(NoForbiddenKey))
        .unwrap();
    let running = env.start_manager(manager);
    running.install_webhooks("testenv-webhooks").await.unwrap();

    let api: Api<ConfigMap> = Api::default_namespaced(env.client());
    api.create(&PostParams::default(), &config_map("fine", "allowed"))
        .await
        .unwrap();
    let refused = api
        .create(&PostParams::default(), &config_map("bad", "forbidden"))
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("not a Status: {refused}");
    };
    assert_eq!(status.code, 403);
    assert!(
        status
            .message
            .ends_with("denied the request: data.forbidden: not allowed"),
        "{}",
        status.message
    );
    running.stop().await.unwrap();
}

#[tokio::test]
async fn installing_webhooks_without_them_is_a_clear_error() {
    let env = TestEnv::start().await.unwrap();
    let running = env.start_manager(env.manager());
    let error = running.install_webhooks("none").await.unwrap_err();
    assert!(matches!(error, Error::WebhooksNotEnabled), "{error}");
    assert!(
        error.to_string().contains("TestEnvBuilder::webhooks()"),
        "{error}"
    );
    running.stop().await.unwrap();
}
