//! The Kubernetes JSON conventions a protobuf message does not state: messages whose JSON
//! form is not an object of their fields (times, quantities, int-or-string, raw JSON,
//! schema unions, string-list wrappers), fields Go embeds (their fields appear in the
//! enclosing JSON object), and the few fields whose JSON name differs from the protobuf
//! name (`$ref`, `x-kubernetes-*`).

use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};

/// A message with a JSON form of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    /// `meta/v1.Time`: RFC 3339 in seconds (`2006-01-02T15:04:05Z`); the zero time is null.
    Time,
    /// `meta/v1.MicroTime`: RFC 3339 in microseconds.
    MicroTime,
    /// `meta/v1.Duration`: a Go duration string (`1h2m3s`).
    Duration,
    /// `resource.Quantity`: its string.
    Quantity,
    /// `intstr.IntOrString`: a number or a string.
    IntOrString,
    /// `runtime.RawExtension`, `meta/v1.FieldsV1`, apiextensions `JSON`: raw JSON bytes.
    RawJson,
    /// apiextensions `JSONSchemaPropsOrArray`: a schema, or an array of schemas.
    SchemaOrArray,
    /// apiextensions `JSONSchemaPropsOrBool`: a schema, or a bool.
    SchemaOrBool,
    /// apiextensions `JSONSchemaPropsOrStringArray`: a schema, or an array of strings.
    SchemaOrStringArray,
    /// A Go `[]string` type (`ExtraValue`, `AttestationValue`, `Verbs`): its `items`.
    StringList,
}

/// The special JSON form of a message, if it has one (by its name, whatever its package
/// prefix).
pub fn special(desc: &MessageDescriptor) -> Option<Special> {
    let full = desc.full_name();
    let is = |suffix: &str| full.ends_with(suffix);
    Some(match desc.name() {
        "Time" if is("apis.meta.v1.Time") => Special::Time,
        "MicroTime" if is("apis.meta.v1.MicroTime") => Special::MicroTime,
        "Duration" if is("apis.meta.v1.Duration") => Special::Duration,
        "Quantity" if is("api.resource.Quantity") => Special::Quantity,
        "IntOrString" if is("util.intstr.IntOrString") => Special::IntOrString,
        "RawExtension" if is("pkg.runtime.RawExtension") => Special::RawJson,
        "FieldsV1" if is("apis.meta.v1.FieldsV1") => Special::RawJson,
        "JSON" if is("apiextensions.v1.JSON") => Special::RawJson,
        "JSONSchemaPropsOrArray" => Special::SchemaOrArray,
        "JSONSchemaPropsOrBool" => Special::SchemaOrBool,
        "JSONSchemaPropsOrStringArray" => Special::SchemaOrStringArray,
        "ExtraValue" | "AttestationValue" | "Verbs" if is_string_list(desc) => Special::StringList,
        _ => return None,
    })
}

/// Whether a message is one `repeated string items = 1` field.
fn is_string_list(desc: &MessageDescriptor) -> bool {
    let mut fields = desc.fields();
    matches!(
        (fields.next(), fields.next()),
        (Some(f), None) if f.name() == "items" && f.is_list() && f.kind() == Kind::String
    )
}

/// Fields Go embeds in their struct (`json:""` or `json:",inline"`): (field name, message
/// type name suffix). Their fields are the enclosing object's in JSON.
const INLINE: &[(&str, &str)] = &[
    ("volumeSource", "core.v1.VolumeSource"),
    ("persistentVolumeSource", "core.v1.PersistentVolumeSource"),
    ("localObjectReference", "core.v1.LocalObjectReference"),
    ("handler", "core.v1.ProbeHandler"),
    (
        "ephemeralContainerCommon",
        "core.v1.EphemeralContainerCommon",
    ),
    ("ingressRuleValue", "networking.v1.IngressRuleValue"),
    ("deviceConfiguration", "resource.v1.DeviceConfiguration"),
    (
        "ruleWithOperations",
        "admissionregistration.v1.RuleWithOperations",
    ),
    ("rule", "admissionregistration.v1.Rule"),
];

/// Whether a (message-typed) field is embedded in JSON.
pub fn is_inline(field: &FieldDescriptor) -> bool {
    let Kind::Message(m) = field.kind() else {
        return false;
    };
    INLINE
        .iter()
        .any(|(name, ty)| field.name() == *name && m.full_name().ends_with(ty))
}

/// Non-pointer `omitempty` numbers and bools that Go clients send on every message (a
/// protobuf message carries every non-pointer field): (message name, field). A zero there
/// is "unset" and left out of the JSON as Go's encoder would. Other zeros are kept: the
/// field may be a pointer whose zero means something (`replicas: 0`).
const OMIT_ZERO: &[(&str, &str)] = &[
    ("ObjectMeta", "generation"),
    ("Container", "stdin"),
    ("Container", "stdinOnce"),
    ("Container", "tty"),
    ("PodSpec", "hostNetwork"),
    ("PodSpec", "hostPID"),
    ("PodSpec", "hostIPC"),
    ("DeploymentSpec", "minReadySeconds"),
    ("DeploymentSpec", "paused"),
    ("ServicePort", "nodePort"),
    ("ServiceSpec", "healthCheckNodePort"),
    ("ServiceSpec", "publishNotReadyAddresses"),
];

/// Whether a zero value of this field is left out of the JSON.
pub fn omits_zero(field: &FieldDescriptor) -> bool {
    let parent = field.parent_message();
    OMIT_ZERO
        .iter()
        .any(|(m, f)| parent.name() == *m && field.name() == *f)
}

/// The JSON name of a field.
pub fn json_name(field: &FieldDescriptor) -> String {
    let name = field.name();
    if field.parent_message().name() == "JSONSchemaProps" {
        match name {
            "ref" => return "$ref".into(),
            "schema" => return "$schema".into(),
            _ => {}
        }
        if let Some(rest) = name.strip_prefix("xKubernetes") {
            let mut out = String::from("x-kubernetes");
            for c in rest.chars() {
                if c.is_ascii_uppercase() {
                    out.push('-');
                    out.push(c.to_ascii_lowercase());
                } else {
                    out.push(c);
                }
            }
            return out;
        }
    }
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::protobuf::descriptors::by_name;

    #[test]
    fn every_inline_field_exists_and_names_convert() {
        let mut found = 0;
        for msg in [
            "api.core.v1.Volume",
            "api.core.v1.PersistentVolumeSpec",
            "api.core.v1.SecretKeySelector",
            "api.core.v1.Probe",
            "api.core.v1.EphemeralContainer",
            "api.networking.v1.IngressRule",
            "api.resource.v1.DeviceClassConfiguration",
            "api.admissionregistration.v1.NamedRuleWithOperations",
            "api.admissionregistration.v1.RuleWithOperations",
        ] {
            let desc = by_name(msg).unwrap_or_else(|| panic!("{msg}"));
            found += desc.fields().filter(is_inline).count();
        }
        assert_eq!(found, 9);
        let props = by_name("apiextensions_apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps")
            .expect("JSONSchemaProps");
        let name = |f: &str| props.get_field_by_name(f).map(|f| json_name(&f));
        assert_eq!(name("ref").as_deref(), Some("$ref"));
        assert_eq!(
            name("xKubernetesPreserveUnknownFields").as_deref(),
            Some("x-kubernetes-preserve-unknown-fields")
        );
        let extra = by_name("api.certificates.v1.ExtraValue").expect("ExtraValue");
        assert_eq!(special(&extra), Some(Special::StringList));
    }
}
