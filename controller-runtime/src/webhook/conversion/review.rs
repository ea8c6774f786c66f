//! Answering a `ConversionReview`: every object converted to the desired version, keeping its
//! metadata, or — when one object fails — the whole review failed with a message naming it.

use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
use kube::core::{Status, TypeMeta};
use serde_json::{Map, Value};

use crate::webhook::conversion::registry::Registry;

/// The `apiVersion` of the reviews served.
const REVIEW_API_VERSION: &str = "apiextensions.k8s.io/v1";

/// Decodes a review body into its request; the error says what is wrong with it.
pub(crate) fn decode(body: &[u8]) -> Result<ConversionRequest, String> {
    let review: ConversionReview = serde_json::from_slice(body)
        .map_err(|error| format!("cannot decode the ConversionReview: {error}"))?;
    if review.types.api_version != REVIEW_API_VERSION {
        return Err(format!(
            "unsupported ConversionReview version `{}`; only `{REVIEW_API_VERSION}` is served",
            review.types.api_version
        ));
    }
    ConversionRequest::from_review(review)
        .map_err(|_| "the ConversionReview has no `request`".to_owned())
}

/// Converts every object of `request` to its desired version, in order; the first failure
/// fails them all.
pub(crate) fn convert_all(
    registry: &Registry,
    request: &ConversionRequest,
) -> Result<Vec<Value>, String> {
    let desired = request.desired_api_version.as_str();
    request
        .objects
        .iter()
        .map(|object| {
            convert_one(registry, object, desired)
                .map_err(|error| format!("converting {} to {desired}: {error}", describe(object)))
        })
        .collect()
}

fn convert_one(registry: &Registry, object: &Value, desired: &str) -> Result<Value, String> {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .ok_or("the object has no `apiVersion`")?;
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("the object has no `kind`")?;
    let (group, version) = split_api_version(api_version);
    let (desired_group, desired_version) = split_api_version(desired);
    if group != desired_group {
        return Err(format!(
            "{api_version} and {desired} are of different API groups"
        ));
    }
    if version == desired_version {
        return Ok(object.clone());
    }
    let conversions = registry
        .get(group, kind)
        .ok_or_else(|| format!("no conversion is registered for {group}/{kind}"))?;
    let mut converted = conversions.convert(object, version, desired_version)?;
    let Some(fields) = converted.as_object_mut() else {
        return Err("the conversion did not produce an object".to_owned());
    };
    fields.insert("apiVersion".to_owned(), Value::String(desired.to_owned()));
    fields.insert("kind".to_owned(), Value::String(kind.to_owned()));
    let metadata = kept_metadata(object.get("metadata"), fields.get("metadata"));
    fields.insert("metadata".to_owned(), metadata);
    Ok(converted)
}

/// The original metadata, with the labels and annotations the conversion set added (the only
/// metadata the API server lets a conversion change).
fn kept_metadata(original: Option<&Value>, converted: Option<&Value>) -> Value {
    let mut metadata = original
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_else(Map::new);
    for field in ["labels", "annotations"] {
        let Some(set) = converted
            .and_then(|converted| converted.get(field))
            .and_then(Value::as_object)
            .filter(|set| !set.is_empty())
        else {
            continue;
        };
        let entry = metadata
            .entry(field.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        if !entry.is_object() {
            *entry = Value::Object(Map::new());
        }
        if let Some(kept) = entry.as_object_mut() {
            kept.extend(set.iter().map(|(key, value)| (key.clone(), value.clone())));
        }
    }
    Value::Object(metadata)
}

/// `(group, version)` of an `apiVersion` (`v1` is the core group's).
fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// `Kind namespace/name` (or `Kind name`) of an object, for messages.
fn describe(object: &Value) -> String {
    let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str);
    let kind = text("/kind").unwrap_or("object");
    match (text("/metadata/namespace"), text("/metadata/name")) {
        (Some(namespace), Some(name)) => format!("{kind} {namespace}/{name}"),
        (None, Some(name)) => format!("{kind} {name}"),
        _ => format!("{kind} (unnamed)"),
    }
}

/// The response review: success with `objects`, or failure with `message` and no objects.
pub(crate) fn encode(uid: &str, outcome: Result<Vec<Value>, String>) -> Vec<u8> {
    let (result, converted_objects) = match outcome {
        Ok(objects) => (Status::success(), objects),
        Err(message) => (Status::failure(&message, ""), Vec::new()),
    };
    let review = ConversionReview {
        types: TypeMeta {
            api_version: REVIEW_API_VERSION.to_owned(),
            kind: "ConversionReview".to_owned(),
        },
        request: None,
        response: Some(ConversionResponse {
            types: None,
            uid: uid.to_owned(),
            result,
            converted_objects,
        }),
    };
    serde_json::to_vec(&review).unwrap_or_default()
}
