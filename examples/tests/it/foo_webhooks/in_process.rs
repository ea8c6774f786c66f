//! The operator against the simulator in this process: the simulator calls its webhooks over
//! HTTPS (trusting the CA the operator made) — invalid Foos refused with the validator's
//! message, absent replicas defaulted, every read converted to the version asked for — and its
//! controller keeps the Deployment.

use std::time::Duration;

use super::example::admission::{DEFAULT_REPLICAS, check_deployment};
use super::example::names::{CONTROLLER_NAME, GROUP, VALIDATING_WEBHOOK};
use super::example::operator::{self, Settings};
use super::example::{v1, v1alpha1};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kube::api::{DynamicObject, Patch, PatchParams, PostParams};
use kube::{Api, ResourceExt};
use testenv::TestEnv;

use super::{foo_resource, refusal};

/// The message the API server gives for a denial of the validating webhook.
fn denied(reason: &str) -> String {
    format!("admission webhook \"{VALIDATING_WEBHOOK}\" denied the request: {reason}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulator_calls_the_webhooks_and_the_controller_keeps_the_deployment() {
    // The workload simulator makes the Deployment's replicas available (no kubelet otherwise).
    let Some(env) = TestEnv::builder()
        .server(|server| server.workload_simulator(Duration::from_millis(50)))
        .start_or_skip()
        .await
        .unwrap()
    else {
        return;
    };
    let client = env.client();
    let settings = Settings {
        port: 0,
        ..Settings::default()
    };
    let running = operator::start(client.clone(), settings).await.unwrap();
    let alpha: Api<v1alpha1::Foo> = Api::default_namespaced(client.clone());
    let hub: Api<v1::Foo> = Api::default_namespaced(client.clone());
    let create = PostParams::default();

    // Refused with the validator's own message, whichever version is written.
    let bad_name = v1::new_foo("bad-name", "Web_1", Some(1));
    let status = refusal(hub.create(&create, &bad_name).await);
    let reason = check_deployment(&bad_name.spec.deployment).unwrap_err();
    assert_eq!((status.code, status.message), (403, denied(&reason)));
    let status = refusal(
        alpha
            .create(&create, &v1alpha1::new_foo("too-big", "web", Some(11)))
            .await,
    );
    assert_eq!(
        status.message,
        denied("spec.deployment.replicas: Invalid value: 11: must be between 1 and 10")
    );
    assert!(hub.get_opt("bad-name").await.unwrap().is_none());

    // Absent replicas come back defaulted, in either version.
    let created = alpha
        .create(&create, &v1alpha1::new_foo("example", "example", None))
        .await
        .unwrap();
    assert_eq!(created.spec.replicas, Some(DEFAULT_REPLICAS));
    let created = hub
        .create(&create, &v1::new_foo("other", "other", None))
        .await
        .unwrap();
    assert_eq!(created.spec.deployment.replicas, Some(DEFAULT_REPLICAS));

    // Each version reads (get and list) as that version, in its own shape.
    for version in ["v1alpha1", "v1"] {
        let api_version = format!("{GROUP}/{version}");
        let foos: Api<DynamicObject> =
            Api::namespaced_with(client.clone(), "default", &foo_resource(version));
        let example = foos.get("example").await.unwrap();
        assert_eq!(example.types.unwrap().api_version, api_version);
        let spec = &example.data["spec"];
        let (name, replicas) = match version {
            "v1" => (&spec["deployment"]["name"], &spec["deployment"]["replicas"]),
            _ => (&spec["deploymentName"], &spec["replicas"]),
        };
        assert_eq!(
            (name.as_str(), replicas.as_i64()),
            (Some("example"), Some(1))
        );
        let list = foos.list(&Default::default()).await.unwrap();
        assert_eq!(list.types.api_version, api_version);
        let names: Vec<String> = list.items.iter().map(ResourceExt::name_any).collect();
        assert_eq!(names, ["example", "other"]);
        for item in &list.items {
            assert_eq!(item.types.as_ref().unwrap().api_version, api_version);
        }
    }

    // An update is checked too: the Deployment cannot be renamed.
    let rename = serde_json::json!({"spec": {"deploymentName": "renamed"}});
    let status = refusal(
        alpha
            .patch("example", &PatchParams::default(), &Patch::Merge(&rename))
            .await,
    );
    assert_eq!(
        status.message,
        denied(
            "spec.deployment.name: Invalid value: \"renamed\": field is immutable (was \"example\")"
        )
    );

    // The controller keeps the Deployment and reports its replicas, read here as v1alpha1.
    let deployments: Api<Deployment> = Api::default_namespaced(client.clone());
    let deployment = env
        .eventually("the Deployment", || async {
            deployments.get_opt("example").await.unwrap()
        })
        .await
        .unwrap();
    assert_eq!(deployment.spec.replicas, Some(DEFAULT_REPLICAS));
    let owner = &deployment.owner_references()[0];
    assert_eq!(
        (
            owner.api_version.as_str(),
            owner.kind.as_str(),
            owner.name.as_str()
        ),
        ("webhooks.kube-rt.dev/v1", "Foo", "example")
    );
    env.eventually("availableReplicas in the Foo's status", || async {
        let foo = alpha.get("example").await.unwrap();
        let available = foo.status.map(|status| status.available_replicas);
        (available == Some(DEFAULT_REPLICAS)).then_some(())
    })
    .await
    .unwrap();

    // Each reconcile reports through the controller's event recorder.
    let synced = env
        .eventually("the Synced event", || async {
            let server = env.simulator().expect("the test runs on the simulator");
            server.list::<Event>().into_iter().find(|event| {
                event.reason.as_deref() == Some("Synced")
                    && event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("example")
            })
        })
        .await
        .unwrap();
    assert_eq!(synced.type_.as_deref(), Some("Normal"));
    assert_eq!(
        synced.reporting_controller.as_deref(),
        Some(CONTROLLER_NAME)
    );

    running.stop().await.unwrap();
    env.stop().await.unwrap();
}
