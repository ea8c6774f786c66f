//! The protobuf row of `codecs`: the fixture's pods in Kubernetes' protobuf encoding (kube-rs's
//! k8s-pb structs, encoded and decoded with prost), converted from the typed Pods field by field
//! for the fields the fixture sets. Its decode figure is prost's decode into k8s-pb's `Pod`: a
//! lower bound of a protobuf decode path, which would still have to turn that struct into a
//! `k8s_openapi` Pod (no crate provides that conversion).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as api;
use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::api::core::v1 as pb;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as pb_meta;

fn time(t: &Option<meta::Time>) -> Option<pb_meta::Time> {
    t.as_ref().map(|t| pb_meta::Time {
        seconds: Some(t.0.as_second()),
        nanos: Some(t.0.subsec_nanosecond()),
    })
}

fn quantities(
    map: &Option<BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
) -> BTreeMap<String, Quantity> {
    map.iter()
        .flatten()
        .map(|(k, q)| {
            (
                k.clone(),
                Quantity {
                    string: Some(q.0.clone()),
                },
            )
        })
        .collect()
}

fn metadata(m: &meta::ObjectMeta) -> pb_meta::ObjectMeta {
    pb_meta::ObjectMeta {
        name: m.name.clone(),
        generate_name: m.generate_name.clone(),
        namespace: m.namespace.clone(),
        uid: m.uid.clone(),
        resource_version: m.resource_version.clone(),
        generation: m.generation,
        creation_timestamp: time(&m.creation_timestamp),
        deletion_timestamp: time(&m.deletion_timestamp),
        labels: m.labels.clone().unwrap_or_default(),
        annotations: m.annotations.clone().unwrap_or_default(),
        owner_references: m
            .owner_references
            .iter()
            .flatten()
            .map(|o| pb_meta::OwnerReference {
                api_version: Some(o.api_version.clone()),
                kind: Some(o.kind.clone()),
                name: Some(o.name.clone()),
                uid: Some(o.uid.clone()),
                controller: o.controller,
                block_owner_deletion: o.block_owner_deletion,
            })
            .collect(),
        finalizers: m.finalizers.clone().unwrap_or_default(),
        managed_fields: m
            .managed_fields
            .iter()
            .flatten()
            .map(|e| pb_meta::ManagedFieldsEntry {
                manager: e.manager.clone(),
                operation: e.operation.clone(),
                api_version: e.api_version.clone(),
                time: time(&e.time),
                fields_type: e.fields_type.clone(),
                fields_v1: e.fields_v1.as_ref().map(|f| pb_meta::FieldsV1 {
                    raw: serde_json::to_vec(&f.0).ok(),
                }),
                subresource: e.subresource.clone(),
            })
            .collect(),
        ..Default::default()
    }
}

fn container(c: &api::Container) -> pb::Container {
    pb::Container {
        name: Some(c.name.clone()),
        image: c.image.clone(),
        ports: c
            .ports
            .iter()
            .flatten()
            .map(|p| pb::ContainerPort {
                name: p.name.clone(),
                container_port: Some(p.container_port),
                protocol: p.protocol.clone(),
                host_port: p.host_port,
                host_ip: p.host_ip.clone(),
            })
            .collect(),
        env: c
            .env
            .iter()
            .flatten()
            .map(|e| pb::EnvVar {
                name: Some(e.name.clone()),
                value: e.value.clone(),
                value_from: None,
            })
            .collect(),
        resources: c.resources.as_ref().map(|r| pb::ResourceRequirements {
            limits: quantities(&r.limits),
            requests: quantities(&r.requests),
            claims: Vec::new(),
        }),
        volume_mounts: c
            .volume_mounts
            .iter()
            .flatten()
            .map(|v| pb::VolumeMount {
                name: Some(v.name.clone()),
                mount_path: Some(v.mount_path.clone()),
                read_only: v.read_only,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn status(s: &api::PodStatus) -> pb::PodStatus {
    pb::PodStatus {
        phase: s.phase.clone(),
        pod_ip: s.pod_ip.clone(),
        host_ip: s.host_ip.clone(),
        start_time: time(&s.start_time),
        conditions: s
            .conditions
            .iter()
            .flatten()
            .map(|c| pb::PodCondition {
                r#type: Some(c.type_.clone()),
                status: Some(c.status.clone()),
                last_transition_time: time(&c.last_transition_time),
                ..Default::default()
            })
            .collect(),
        container_statuses: s
            .container_statuses
            .iter()
            .flatten()
            .map(|c| pb::ContainerStatus {
                name: Some(c.name.clone()),
                ready: Some(c.ready),
                restart_count: Some(c.restart_count),
                image: Some(c.image.clone()),
                image_id: Some(c.image_id.clone()),
                container_id: c.container_id.clone(),
                started: c.started,
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

/// The fixture pod `pod` as k8s-pb's Pod (the fields the fixture sets).
pub fn pod(pod: &api::Pod) -> pb::Pod {
    pb::Pod {
        metadata: Some(metadata(&pod.metadata)),
        spec: pod.spec.as_ref().map(|s| pb::PodSpec {
            node_name: s.node_name.clone(),
            service_account_name: s.service_account_name.clone(),
            containers: s.containers.iter().map(container).collect(),
            volumes: s
                .volumes
                .iter()
                .flatten()
                .map(|v| pb::Volume {
                    name: Some(v.name.clone()),
                    volume_source: None,
                })
                .collect(),
            ..Default::default()
        }),
        status: pod.status.as_ref().map(status),
    }
}
