//! The Deployment both example operators run: `nginx:latest` pods selected by their labels.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::DeploymentSpec;
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

/// The spec of a Deployment of `replicas` (absent: the server's default) pods of one
/// `nginx:latest` container, selected by and labelled with `labels`.
pub fn nginx_deployment_spec(
    labels: BTreeMap<String, String>,
    replicas: Option<i32>,
) -> DeploymentSpec {
    DeploymentSpec {
        replicas,
        selector: LabelSelector {
            match_labels: Some(labels.clone()),
            match_expressions: None,
        },
        template: PodTemplateSpec {
            metadata: Some(ObjectMeta {
                labels: Some(labels),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: "nginx".to_owned(),
                    image: Some("nginx:latest".to_owned()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
        },
        ..DeploymentSpec::default()
    }
}
