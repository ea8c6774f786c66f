//! `new_deployment`: the Deployment a Foo asks for.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};

use kube::{Resource, ResourceExt};

use crate::foo::Foo;

/// The Deployment for `foo`: named `spec.deploymentName` in the Foo's namespace, controlled by
/// the Foo (`controller` and `blockOwnerDeletion`), labels `app=nginx` and `controller=<foo>` on
/// the selector and the pods, `spec.replicas` replicas (absent: the server's default) of one
/// `nginx:latest` container.
pub fn new_deployment(foo: &Foo) -> Deployment {
    let labels = BTreeMap::from([
        ("app".to_owned(), "nginx".to_owned()),
        ("controller".to_owned(), foo.name_any()),
    ]);
    let owner = OwnerReference {
        api_version: Foo::api_version(&()).into_owned(),
        kind: Foo::kind(&()).into_owned(),
        name: foo.name_any(),
        uid: foo.uid().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.namespace(),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        spec: nginx_deployment_spec(labels, foo.spec.replicas),
        status: None,
    }
}

/// The spec of a Deployment of `replicas` (absent: the server's default) pods of one
/// `nginx:latest` container, selected by and labelled with `labels`: what both example
/// operators run.
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
