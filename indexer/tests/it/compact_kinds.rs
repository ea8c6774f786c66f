//! The round-trip property over an example object of every built-in kind a server serves by
//! default (the simulator's list of k8s-openapi types). Each example is generated from the
//! kind's OpenAPI schema (k8s-openapi's `schemars` implementations): every property filled,
//! nested types to a depth of six, one entry per list and map, values of each schema type and
//! format; then decoded as the typed object and serialized again, so the bytes are what a
//! server would send for that object.

use indexer::fuzzing::check_compact_round_trip;
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// How deep nested types are filled whole: deeper, an object gets only its required fields, and
/// lists and maps stay empty (the schemas of CRDs and of some policies are recursive).
const MAX_DEPTH: usize = 6;

struct Example<'a> {
    definitions: &'a Map<String, Value>,
}

impl Example<'_> {
    /// An example of `schema`, `depth` referenced types deep.
    fn value(&self, schema: &Value, depth: usize) -> Value {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.rsplit('/').next().unwrap_or_default();
            let referenced = self.definitions.get(name).unwrap_or(&Value::Null);
            return self.value(referenced, depth + 1);
        }
        if schema.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            return json!(8080);
        }
        if let Some(first) = schema
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return first.clone();
        }
        let whole = depth <= MAX_DEPTH;
        match schema.get("type").and_then(Value::as_str) {
            Some("object") => self.object(schema, depth),
            Some("array") => Value::Array(
                schema
                    .get("items")
                    .filter(|_| whole)
                    .map(|items| self.value(items, depth))
                    .into_iter()
                    .collect(),
            ),
            Some("string") => match schema.get("format").and_then(Value::as_str) {
                Some("date-time") => json!("2026-01-02T03:04:05Z"),
                Some("byte") => json!("aGVsbG8="),
                _ => json!("text-value"),
            },
            Some("integer") => json!(3),
            Some("number") => json!(1.5),
            Some("boolean") => json!(true),
            // Free-form JSON (RawExtension, JSON, fieldsV1).
            _ => json!({"free": ["form", 1, true, null]}),
        }
    }

    fn object(&self, schema: &Value, depth: usize) -> Value {
        let whole = depth <= MAX_DEPTH;
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut out = Map::new();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                // Embedded objects check their own type (a StatefulSet's claim templates), so
                // their apiVersion and kind are left out; the top level's are set by the caller.
                let typed = matches!(name.as_str(), "apiVersion" | "kind");
                if (whole && !typed) || required.contains(&name.as_str()) {
                    out.insert(name.clone(), self.value(property, depth));
                }
            }
        } else if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            if whole {
                out.insert("key-1".to_owned(), self.value(values, depth));
            }
        } else {
            out.insert("free".to_owned(), json!({"form": [1, "two"]}));
        }
        Value::Object(out)
    }
}

/// The wire JSON of a fully populated example `K`.
fn example<K>() -> Vec<u8>
where
    K: JsonSchema + k8s_openapi::Resource + serde::de::DeserializeOwned + serde::Serialize,
{
    let root = SchemaSettings::draft2020_12()
        .into_generator()
        .into_root_schema_for::<K>()
        .to_value();
    let no_definitions = Map::new();
    let definitions = root
        .get("$defs")
        .and_then(Value::as_object)
        .unwrap_or(&no_definitions);
    let mut value = Example { definitions }.value(&root, 0);
    value["apiVersion"] = json!(K::API_VERSION);
    value["kind"] = json!(K::KIND);
    let typed: K = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("the example {} does not decode: {e}\n{value:#}", K::KIND));
    serde_json::to_vec(&typed).expect("serializable")
}

fn check_kind<K>()
where
    K: JsonSchema
        + k8s_openapi::Resource
        + kube::Resource
        + serde::de::DeserializeOwned
        + serde::Serialize
        + PartialEq
        + std::fmt::Debug,
{
    let bytes = example::<K>();
    let object: Value = serde_json::from_slice(&bytes).expect("JSON");
    let metadata = object["metadata"].as_object().expect("metadata");
    // A rich example: every metadata field present, managedFields included, and a body.
    for field in [
        "name",
        "labels",
        "annotations",
        "ownerReferences",
        "managedFields",
        "finalizers",
    ] {
        assert!(
            metadata.contains_key(field),
            "{}: no metadata.{field}",
            K::KIND
        );
    }
    assert!(
        object.as_object().expect("object").len() > 3,
        "{}: no body",
        K::KIND
    );
    check_compact_round_trip::<K>(&bytes).unwrap_or_else(|e| panic!("{}: {e}", K::KIND));
}

macro_rules! every_kind {
    ($($t:ty),* $(,)?) => {{
        let mut kinds = 0;
        $(check_kind::<$t>(); kinds += 1;)*
        kinds
    }};
}

#[test]
fn an_example_of_every_built_in_kind_round_trips() {
    use k8s_openapi::api::{
        admissionregistration, apps, autoscaling, batch, certificates, coordination, core,
        discovery, events, flowcontrol, networking, node, policy, rbac, resource, scheduling,
        storage, storagemigration,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
    let kinds = {
        every_kind![
            core::v1::ConfigMap,
            core::v1::Endpoints,
            core::v1::Event,
            core::v1::LimitRange,
            core::v1::Namespace,
            core::v1::Node,
            core::v1::PersistentVolume,
            core::v1::PersistentVolumeClaim,
            core::v1::Pod,
            core::v1::PodTemplate,
            core::v1::ReplicationController,
            core::v1::ResourceQuota,
            core::v1::Secret,
            core::v1::Service,
            core::v1::ServiceAccount,
            admissionregistration::v1::MutatingAdmissionPolicy,
            admissionregistration::v1::MutatingAdmissionPolicyBinding,
            admissionregistration::v1::MutatingWebhookConfiguration,
            admissionregistration::v1::ValidatingAdmissionPolicy,
            admissionregistration::v1::ValidatingAdmissionPolicyBinding,
            admissionregistration::v1::ValidatingWebhookConfiguration,
            apiextensions::v1::CustomResourceDefinition,
            apiregistration::v1::APIService,
            apps::v1::ControllerRevision,
            apps::v1::DaemonSet,
            apps::v1::Deployment,
            apps::v1::ReplicaSet,
            apps::v1::StatefulSet,
            autoscaling::v2::HorizontalPodAutoscaler,
            autoscaling::v1::HorizontalPodAutoscaler,
            batch::v1::CronJob,
            batch::v1::Job,
            certificates::v1::CertificateSigningRequest,
            certificates::v1::ClusterTrustBundle,
            certificates::v1::PodCertificateRequest,
            coordination::v1::Lease,
            discovery::v1::EndpointSlice,
            events::v1::Event,
            flowcontrol::v1::FlowSchema,
            flowcontrol::v1::PriorityLevelConfiguration,
            networking::v1::IPAddress,
            networking::v1::Ingress,
            networking::v1::IngressClass,
            networking::v1::NetworkPolicy,
            networking::v1::ServiceCIDR,
            node::v1::RuntimeClass,
            policy::v1::PodDisruptionBudget,
            rbac::v1::ClusterRole,
            rbac::v1::ClusterRoleBinding,
            rbac::v1::Role,
            rbac::v1::RoleBinding,
            resource::v1::DeviceClass,
            resource::v1::DeviceTaintRule,
            resource::v1::ResourceClaim,
            resource::v1::ResourceClaimTemplate,
            resource::v1::ResourceSlice,
            scheduling::v1::PriorityClass,
            storage::v1::CSIDriver,
            storage::v1::CSINode,
            storage::v1::CSIStorageCapacity,
            storage::v1::StorageClass,
            storage::v1::VolumeAttachment,
            storage::v1::VolumeAttributesClass,
            storagemigration::v1::StorageVersionMigration,
        ]
    };
    assert_eq!(kinds, 64);
}
