//! The `AdmissionReview` wire format: [`AdmissionRequest`], decoding a request body (kept raw beside kube's typed
//! request, since a defaulter's patch is computed against the object exactly as it was sent)
//! and encoding a response (`patch` base64-encoded, as the API server decodes `[]byte`).

use base64::Engine as _;
use kube::core::admission::{AdmissionResponse, META_API_VERSION_V1, META_KIND};
use kube::core::{DynamicObject, TypeMeta};
use serde::Deserialize;
use serde_json::Value;

/// One admission request as the API server sends it (kube's type, with the objects untyped):
/// who asks ([`user_info`](kube::core::admission::AdmissionRequest::user_info)), for what
/// [`operation`](kube::core::admission::AdmissionRequest::operation), on which namespace and
/// name, whether it is a [`dry_run`](kube::core::admission::AdmissionRequest::dry_run) (a
/// webhook with side effects must not make them then). Typed handlers get it beside the typed
/// objects.
pub type AdmissionRequest = kube::core::admission::AdmissionRequest<DynamicObject>;

/// A decoded review: kube's request and the raw objects it carried.
pub(crate) struct DecodedReview {
    /// The review's `apiVersion` and `kind`, echoed in the response.
    pub(crate) types: TypeMeta,
    /// The request, objects untyped.
    pub(crate) request: AdmissionRequest,
    /// `request.object` as sent (absent or `null` on DELETE).
    pub(crate) object: Option<Value>,
    /// `request.oldObject` as sent (present on UPDATE and DELETE).
    pub(crate) old_object: Option<Value>,
}

/// The envelope, with the request kept as JSON.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    request: Option<Value>,
}

/// Decodes a review body; the error says what is wrong with it.
pub(crate) fn decode(body: &[u8]) -> Result<DecodedReview, String> {
    let envelope: Envelope = serde_json::from_slice(body)
        .map_err(|error| format!("cannot decode the AdmissionReview: {error}"))?;
    if !envelope.api_version.is_empty() && envelope.api_version != META_API_VERSION_V1 {
        return Err(format!(
            "unsupported AdmissionReview version `{}`; only `{META_API_VERSION_V1}` is served",
            envelope.api_version
        ));
    }
    let Some(mut request) = envelope.request else {
        return Err("the AdmissionReview has no `request`".to_owned());
    };
    let object = take_object(&mut request, "object");
    let old_object = take_object(&mut request, "oldObject");
    let mut request: AdmissionRequest = serde_json::from_value(request)
        .map_err(|error| format!("cannot decode the AdmissionReview's request: {error}"))?;
    // kube's request parses the objects as `DynamicObject`s; parse them from the raw copies.
    request.object = dynamic(object.as_ref(), "object")?;
    request.old_object = dynamic(old_object.as_ref(), "oldObject")?;
    let types = TypeMeta {
        api_version: META_API_VERSION_V1.to_owned(),
        kind: if envelope.kind.is_empty() {
            META_KIND.to_owned()
        } else {
            envelope.kind
        },
    };
    request.types = types.clone();
    Ok(DecodedReview {
        types,
        request,
        object,
        old_object,
    })
}

/// Removes `field` from the request, `None` when absent or `null`.
fn take_object(request: &mut Value, field: &str) -> Option<Value> {
    let value = request
        .as_object_mut()?
        .insert(field.to_owned(), Value::Null)?;
    (!value.is_null()).then_some(value)
}

/// `value` as a `DynamicObject`.
fn dynamic(
    value: Option<&Value>,
    field: &str,
) -> Result<Option<kube::core::DynamicObject>, String> {
    value
        .map(|value| {
            serde_json::from_value(value.clone())
                .map_err(|error| format!("cannot decode the request's `{field}`: {error}"))
        })
        .transpose()
}

/// Encodes `response` (its uid already set) as a review of `types`: a denial without a code
/// gets 403, an allowed response without one 200 (controller-runtime fills the code in too).
pub(crate) fn encode(types: &TypeMeta, mut response: AdmissionResponse) -> Vec<u8> {
    if response.result.code == 0 {
        response.result.code = if response.allowed { 200 } else { 403 };
    }
    let patch = response.patch.take();
    let mut encoded = serde_json::to_value(&response).unwrap_or_else(|error| {
        serde_json::json!({
            "uid": response.uid,
            "allowed": false,
            "status": {"code": 500, "message": format!("cannot encode the response: {error}")},
        })
    });
    if let (Some(patch), Some(fields)) = (patch, encoded.as_object_mut()) {
        fields.insert(
            "patch".to_owned(),
            Value::String(base64::engine::general_purpose::STANDARD.encode(patch)),
        );
        fields.insert(
            "patchType".to_owned(),
            Value::String("JSONPatch".to_owned()),
        );
    }
    let review = serde_json::json!({
        "apiVersion": types.api_version,
        "kind": types.kind,
        "response": encoded,
    });
    serde_json::to_vec(&review).unwrap_or_default()
}

/// The review types of a response to a body that could not be decoded.
pub(crate) fn default_types() -> TypeMeta {
    TypeMeta {
        api_version: META_API_VERSION_V1.to_owned(),
        kind: META_KIND.to_owned(),
    }
}
