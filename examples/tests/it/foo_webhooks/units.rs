//! The operator's parts that need no server: the CRD, the conversion, the rules of the
//! admission webhooks, the settings.

use std::net::SocketAddr;

use controller_runtime::webhook::{ClientConfig, Convertible};

use super::example::admission::{MAX_REPLICAS, check_deployment};
use super::example::crd::crd;
use super::example::names::{CRD_NAME, GROUP, STORAGE_VERSION};
use super::example::operator::{Settings, WebhookService};
use super::example::{v1, v1alpha1};

#[test]
fn the_crd_serves_both_versions_and_stores_the_hub() {
    let crd = crd().unwrap();
    assert_eq!(crd.metadata.name.as_deref(), Some(CRD_NAME));
    assert_eq!(crd.spec.group, GROUP);
    assert_eq!(crd.spec.names.plural, "foos");
    let versions: Vec<(&str, bool, bool)> = crd
        .spec
        .versions
        .iter()
        .map(|version| (version.name.as_str(), version.served, version.storage))
        .collect();
    assert_eq!(versions.len(), 2);
    assert!(versions.contains(&("v1alpha1", true, false)));
    assert!(versions.contains(&(STORAGE_VERSION, true, true)));
    assert!(crd.spec.conversion.is_none(), "set once the server listens");
    for version in &crd.spec.versions {
        assert!(version.subresources.as_ref().unwrap().status.is_some());
    }
}

#[test]
fn v1alpha1_converts_to_the_hub_and_back_unchanged() {
    let mut spoke = v1alpha1::new_foo("a", "web", Some(3));
    spoke.metadata.namespace = Some("default".into());
    spoke.status = Some(v1alpha1::FooStatus {
        available_replicas: 2,
    });
    let hub = spoke.convert_to_hub().unwrap();
    assert_eq!(hub.spec.deployment.name, "web");
    assert_eq!(hub.spec.deployment.replicas, Some(3));
    assert_eq!(hub.status.as_ref().unwrap().available_replicas, 2);
    assert_eq!(hub.metadata, spoke.metadata);
    assert_eq!(v1alpha1::Foo::convert_from_hub(&hub).unwrap(), spoke);

    let without_replicas = v1::new_foo("b", "web", None);
    let back = v1alpha1::Foo::convert_from_hub(&without_replicas).unwrap();
    assert_eq!(back.spec.replicas, None);
    assert_eq!(back.convert_to_hub().unwrap(), without_replicas);
}

#[test]
fn deployments_must_be_named_and_sized_within_bounds() {
    let deployment = |name: &str, replicas: Option<i32>| v1::FooDeployment {
        name: name.to_owned(),
        replicas,
    };
    for good in [
        deployment("web", None),
        deployment("web-1.example", Some(1)),
        deployment("a", Some(MAX_REPLICAS)),
    ] {
        assert_eq!(check_deployment(&good), Ok(()), "{good:?}");
    }
    let refused = |name: &str, replicas: Option<i32>| {
        check_deployment(&deployment(name, replicas)).unwrap_err()
    };
    assert!(refused("", None).starts_with("spec.deployment.name: Required value"));
    for bad in ["Web", "web_1", "-web", "web-", "a..b", &"a".repeat(254)] {
        assert!(
            refused(bad, None).starts_with("spec.deployment.name: Invalid value"),
            "{bad}"
        );
    }
    assert_eq!(
        refused("web", Some(0)),
        "spec.deployment.replicas: Invalid value: 0: must be between 1 and 10"
    );
    assert!(refused("web", Some(11)).contains("must be between 1 and 10"));
}

#[test]
fn settings_name_the_service_or_the_bound_url() {
    let bound: SocketAddr = "0.0.0.0:9443".parse().unwrap();
    let by_url = Settings::default();
    assert_eq!(
        by_url.client_config(bound),
        ClientConfig::url("https://127.0.0.1:9443")
    );
    assert_eq!(by_url.certificate_names(), ["localhost", "127.0.0.1"]);

    let service: WebhookService = "operators/foo-webhooks".parse().unwrap();
    let by_service = Settings {
        service: Some(service),
        ..Settings::default()
    };
    assert_eq!(
        by_service.client_config(bound),
        ClientConfig::service("operators", "foo-webhooks")
    );
    assert_eq!(
        by_service.certificate_names()[..2],
        [
            "foo-webhooks.operators.svc",
            "foo-webhooks.operators.svc.cluster.local"
        ]
    );
    for bad in ["foo-webhooks", "/name", "namespace/"] {
        assert!(bad.parse::<WebhookService>().is_err(), "{bad}");
    }
}
