//! JSON → protobuf → JSON round trips through the descriptors, one per convention.

use serde_json::{Value, json};

use super::*;

fn round_trip(api_version: &str, kind: &str, obj: Value) -> Value {
    let doc = encode_object(api_version, kind, &obj).expect("encodes");
    let mut back = decode_object_bytes(&doc).expect("decodes");
    if let Some(m) = back.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
    }
    back
}

#[test]
fn deployment_with_embedded_fields_times_and_int_or_string() {
    let d = json!({
        "metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web", "empty": ""},
            "creationTimestamp": "2025-01-02T03:04:05Z", "generation": 2,
            "ownerReferences": [{"apiVersion": "v1", "kind": "X", "name": "x", "uid": "u", "controller": true}]},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                "containers": [{"name": "c", "image": "nginx", "args": ["a", "b"],
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                    "livenessProbe": {"httpGet": {"path": "/", "port": "http"}, "periodSeconds": 5},
                    "env": [{"name": "K", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]}],
                "volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "cfg", "configMap": {"name": "cm"}}]}}},
        "status": {"conditions": [{"type": "Available", "status": "True",
            "lastUpdateTime": "2025-01-02T03:04:05Z", "lastTransitionTime": "2025-01-02T03:04:05Z"}]}
    });
    assert_eq!(round_trip("apps/v1", "Deployment", d.clone()), d);
}

#[test]
fn bytes_micro_times_and_string_lists() {
    let s = json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"k": "aGVsbG8="}});
    assert_eq!(round_trip("v1", "Secret", s.clone()), s);
    let e = json!({"metadata": {"name": "e"}, "eventTime": "2025-01-02T03:04:05.123456Z",
        "series": {"count": 2, "lastObservedTime": "2025-01-02T03:04:06.000001Z"},
        "regarding": {"kind": "Pod", "name": "p"}, "note": "n", "reason": "R", "type": "Normal",
        "reportingController": "c", "reportingInstance": "i", "action": "A"});
    assert_eq!(round_trip("events.k8s.io/v1", "Event", e.clone()), e);
    let csr = json!({"metadata": {"name": "c"}, "spec": {"request": "AAEC", "signerName": "x/y",
        "usages": ["digital signature"], "extra": {"groups": ["a", "b"]}}});
    assert_eq!(
        round_trip(
            "certificates.k8s.io/v1",
            "CertificateSigningRequest",
            csr.clone()
        ),
        csr
    );
}

#[test]
fn crd_schema_unions_and_names() {
    let crd = json!({"metadata": {"name": "foos.example.com"}, "spec": {"group": "example.com",
        "scope": "Namespaced", "names": {"plural": "foos", "kind": "Foo"},
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": true,
            "properties": {
                "spec": {"type": "object", "additionalProperties": {"type": "string"},
                    "properties": {"n": {"type": "integer", "maximum": 10, "default": 3},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "port": {"x-kubernetes-int-or-string": true}}},
                "status": {"type": "object", "additionalProperties": false}}}}}]}});
    assert_eq!(
        round_trip(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            crd.clone()
        ),
        crd
    );
}

#[test]
fn empty_strings_are_left_out_and_zero_time_is_null() {
    // A Go client sends every non-pointer string, set or not.
    let desc = descriptors::message("", "v1", "ConfigMap").expect("ConfigMap");
    let md = desc.get_field_by_name("metadata").expect("metadata");
    let prost_reflect::Kind::Message(md_desc) = md.kind() else {
        panic!("metadata is a message")
    };
    let mut meta = DynamicMessage::new(md_desc.clone());
    meta.set_field_by_name("name", prost_reflect::Value::String("cm".into()));
    meta.set_field_by_name("generateName", prost_reflect::Value::String(String::new()));
    let ts = md_desc.get_field_by_name("creationTimestamp").expect("ts");
    let prost_reflect::Kind::Message(ts_desc) = ts.kind() else {
        panic!("time is a message")
    };
    meta.set_field(
        &ts,
        prost_reflect::Value::Message(DynamicMessage::new(ts_desc)),
    );
    let mut cm = DynamicMessage::new(desc);
    cm.set_field_by_name("metadata", prost_reflect::Value::Message(meta));
    let doc = envelope::wrap("v1", "ConfigMap", &cm.encode_to_vec());
    assert_eq!(
        decode_object_bytes(&doc).expect("decodes"),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}})
    );
}
