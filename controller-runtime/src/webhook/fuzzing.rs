//! Properties of the webhook server's request handling, checked by the fuzz targets
//! `admission_review` and `conversion_review` (`fuzz/`) and by the property tests. Not a
//! stable API.
//!
//! Each check hands a body to the server's own answering code (the step after the HTTP body
//! is read: decode, run the handler contained, encode) on a fixture server with a validator
//! and a defaulter of ConfigMaps and a two-version conversion, then checks the answer:
//!
//! - admission: 400 exactly when the body does not decode, then an error review; otherwise
//!   200 and a review echoing the request's uid, allowed with code 200 or denied with a code
//!   of at least 400; a validator never patches; a defaulter's patch is a JSON patch that
//!   applies to the object as sent and sets the defaulted label;
//! - conversion: 400 exactly when the body does not decode; otherwise 200 and the request's
//!   uid; a success converts every object to the desired `apiVersion`, keeping its kind and
//!   metadata, and converting the result again to the same version changes nothing; a failure
//!   has a message and no objects;
//! - both: the same body gets the same answer.

use std::borrow::Cow;
use std::sync::OnceLock;

use base64::Engine as _;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::NamespaceResourceScope;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::webhook::admission::review as admission_review;
use crate::webhook::conversion::review as conversion_review;
use crate::webhook::{
    AdmissionRequest, Conversion, ConversionError, Convertible, Defaulter, Denial, Validation,
    Validator, Warnings, Webhook, WebhookServer, WebhookServerConfig,
};

/// The label the fixture's defaulter sets.
pub const DEFAULTED_LABEL: &str = "fuzz.example.com/defaulted";
/// The data key the fixture's validator refuses.
pub const REFUSED_KEY: &str = "refused";

/// Refuses ConfigMaps holding [`REFUSED_KEY`], and updates that change `immutable`.
struct Rules;

impl Validator<ConfigMap> for Rules {
    async fn validate_create(&self, config: &ConfigMap, _request: &AdmissionRequest) -> Validation {
        if config
            .data
            .as_ref()
            .is_some_and(|data| data.contains_key(REFUSED_KEY))
        {
            return Err(Denial::new(format!("`{REFUSED_KEY}` is not allowed")).with_code(422));
        }
        Ok(Warnings::new())
    }

    async fn validate_update(
        &self,
        old: &ConfigMap,
        new: &ConfigMap,
        _request: &AdmissionRequest,
    ) -> Validation {
        if old.immutable != new.immutable {
            return Err(Denial::new("`immutable` cannot change"));
        }
        Ok(Warnings::new())
    }
}

/// Sets [`DEFAULTED_LABEL`] and, on a ConfigMap without data, one default key.
struct Defaults;

impl Defaulter<ConfigMap> for Defaults {
    async fn default(
        &self,
        config: &mut ConfigMap,
        _request: &AdmissionRequest,
    ) -> Result<(), Denial> {
        config
            .metadata
            .labels
            .get_or_insert_default()
            .insert(DEFAULTED_LABEL.to_owned(), "true".to_owned());
        config
            .data
            .get_or_insert_with(|| [("default".to_owned(), "yes".to_owned())].into());
        Ok(())
    }
}

/// Implements `kube::Resource` for a version of `fuzz.example.com`'s `Widget`.
macro_rules! widget_version {
    ($type:ident, $version:literal) => {
        impl kube::Resource for $type {
            type DynamicType = ();
            type Scope = NamespaceResourceScope;
            fn kind(_: &()) -> Cow<'_, str> {
                "Widget".into()
            }
            fn group(_: &()) -> Cow<'_, str> {
                "fuzz.example.com".into()
            }
            fn version(_: &()) -> Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> Cow<'_, str> {
                "widgets".into()
            }
            fn meta(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// `v1` of the fixture's Widget: the size as text.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct WidgetV1 {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: SizeSpec,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SizeSpec {
    #[serde(default)]
    size: String,
}

widget_version!(WidgetV1, "v1");

/// `v2`, the hub: replicas.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct WidgetV2 {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: ReplicasSpec,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct ReplicasSpec {
    #[serde(default)]
    replicas: i64,
}

widget_version!(WidgetV2, "v2");

impl Convertible<WidgetV2> for WidgetV1 {
    fn convert_to_hub(&self) -> Result<WidgetV2, ConversionError> {
        let replicas = self.spec.size.trim().parse::<i64>()?;
        Ok(WidgetV2 {
            metadata: self.metadata.clone(),
            spec: ReplicasSpec { replicas },
        })
    }

    fn convert_from_hub(hub: &WidgetV2) -> Result<Self, ConversionError> {
        Ok(WidgetV1 {
            metadata: hub.metadata.clone(),
            spec: SizeSpec {
                size: hub.spec.replicas.to_string(),
            },
        })
    }
}

/// The server the checks answer with, and a runtime to run its handlers on.
struct Fixture {
    runtime: tokio::runtime::Runtime,
    server: WebhookServer,
    validate_path: String,
    mutate_path: String,
}

fn fixture() -> Result<&'static Fixture, String> {
    static FIXTURE: OnceLock<Result<Fixture, String>> = OnceLock::new();
    FIXTURE
        .get_or_init(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .build()
                .map_err(|e| format!("cannot build a runtime: {e}"))?;
            let server = WebhookServer::new(WebhookServerConfig::new());
            let validator = Webhook::validator::<ConfigMap>(Rules);
            let defaulter = Webhook::defaulter::<ConfigMap>(Defaults);
            let (validate_path, mutate_path) =
                (validator.path().to_owned(), defaulter.path().to_owned());
            for webhook in [validator, defaulter] {
                server.register(webhook).map_err(|e| e.to_string())?;
            }
            server
                .register_conversion(Conversion::hub::<WidgetV2>().spoke::<WidgetV1>())
                .map_err(|e| e.to_string())?;
            Ok(Fixture {
                runtime,
                server,
                validate_path,
                mutate_path,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The server's answer to `body` on `path`, twice: it must be the same both times.
fn answer(fixture: &Fixture, path: &str, body: &[u8]) -> Result<(u16, Value), String> {
    let ask = || {
        fixture
            .runtime
            .block_on(fixture.server.answer(path, body))
            .ok_or_else(|| format!("nothing is served on {path}"))
    };
    let (status, bytes) = ask()?;
    if ask()? != (status, bytes.clone()) {
        return Err(format!("{path}: the same body got two different answers"));
    }
    let review: Value = serde_json::from_slice(&bytes)
        .map_err(|e| format!("{path}: the answer is not JSON ({e})"))?;
    Ok((status, review))
}

fn text<'a>(value: &'a Value, pointer: &str) -> Option<&'a str> {
    value.pointer(pointer).and_then(Value::as_str)
}

/// Checks the answers of the validating and the mutating webhook to `body`.
pub fn check_admission_review(body: &[u8]) -> Result<(), String> {
    let fixture = fixture()?;
    let decoded = admission_review::decode(body);
    for (path, mutating) in [
        (&fixture.validate_path, false),
        (&fixture.mutate_path, true),
    ] {
        let (status, review) = answer(fixture, path, body)?;
        if text(&review, "/apiVersion") != Some("admission.k8s.io/v1") {
            return Err(format!(
                "{path}: the answer is not an AdmissionReview: {review}"
            ));
        }
        let allowed = review.pointer("/response/allowed").and_then(Value::as_bool);
        let code = review
            .pointer("/response/status/code")
            .and_then(Value::as_u64);
        let (Some(allowed), Some(code)) = (allowed, code) else {
            return Err(format!("{path}: no `allowed` or status code: {review}"));
        };
        let decoded = match (&decoded, status) {
            (Err(_), 400) if !allowed && code == 400 => continue,
            (Ok(decoded), 200) => decoded,
            (decoded, status) => {
                return Err(format!(
                    "{path}: answered {status} (allowed {allowed}, code {code}) to a body that \
                     {}decodes",
                    if decoded.is_ok() { "" } else { "never " }
                ));
            }
        };
        if text(&review, "/response/uid") != Some(decoded.request.uid.as_str()) {
            return Err(format!(
                "{path}: the answer lost the request's uid: {review}"
            ));
        }
        if allowed != (code == 200) || (!allowed && code < 400) {
            return Err(format!("{path}: allowed {allowed} with code {code}"));
        }
        let patch = text(&review, "/response/patch");
        match (patch, mutating) {
            (None, _) => {}
            (Some(_), false) => return Err(format!("{path}: a validator patched: {review}")),
            (Some(patch), true) => check_defaulting_patch(patch, decoded.object.as_ref(), &review)?,
        }
    }
    Ok(())
}

/// A defaulter's patch: base64 of a JSON patch that applies to the object as sent and sets the
/// defaulted label.
fn check_defaulting_patch(
    patch: &str,
    object: Option<&Value>,
    review: &Value,
) -> Result<(), String> {
    if text(review, "/response/patchType") != Some("JSONPatch") {
        return Err(format!("a patch without patchType JSONPatch: {review}"));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(patch)
        .map_err(|e| format!("the patch is not base64 ({e})"))?;
    let operations: json_patch::Patch = serde_json::from_slice(&bytes)
        .map_err(|e| format!("the patch is not a JSON patch ({e})"))?;
    let mut patched = object
        .cloned()
        .ok_or("a patch for a request without an object")?;
    json_patch::patch(&mut patched, &operations)
        .map_err(|e| format!("the patch does not apply to the object sent ({e})"))?;
    let label = patched
        .pointer("/metadata/labels")
        .and_then(|labels| labels.get(DEFAULTED_LABEL))
        .and_then(Value::as_str);
    if label != Some("true") {
        return Err(format!(
            "the patched object lacks the defaulted label: {patched}"
        ));
    }
    Ok(())
}

/// Checks the conversion webhook's answer to `body`.
pub fn check_conversion_review(body: &[u8]) -> Result<(), String> {
    let fixture = fixture()?;
    let path = crate::webhook::CONVERT_PATH;
    let decoded = conversion_review::decode(body);
    let (status, review) = answer(fixture, path, body)?;
    if text(&review, "/apiVersion") != Some("apiextensions.k8s.io/v1")
        || text(&review, "/kind") != Some("ConversionReview")
    {
        return Err(format!("the answer is not a ConversionReview: {review}"));
    }
    let result = text(&review, "/response/result/status");
    let request = match (&decoded, status) {
        (Err(_), 400) if result == Some("Failure") => return Ok(()),
        (Ok(request), 200) => request,
        (decoded, status) => {
            return Err(format!(
                "answered {status} to a body that {}decodes: {review}",
                if decoded.is_ok() { "" } else { "never " }
            ));
        }
    };
    if text(&review, "/response/uid") != Some(request.uid.as_str()) {
        return Err(format!("the answer lost the request's uid: {review}"));
    }
    let converted = review
        .pointer("/response/convertedObjects")
        .and_then(Value::as_array);
    match result {
        Some("Success") => {}
        Some("Failure") => {
            let message = text(&review, "/response/result/message").unwrap_or("");
            if message.is_empty() || converted.is_some_and(|objects| !objects.is_empty()) {
                return Err(format!(
                    "a failure without a message, or with objects: {review}"
                ));
            }
            return Ok(());
        }
        other => return Err(format!("result status {other:?}: {review}")),
    }
    let converted = converted.cloned().unwrap_or_default();
    if converted.len() != request.objects.len() {
        return Err(format!(
            "{} objects sent, {} converted",
            request.objects.len(),
            converted.len()
        ));
    }
    let desired = request.desired_api_version.as_str();
    for (sent, got) in request.objects.iter().zip(&converted) {
        // An object already at the desired version comes back as sent; a converted one keeps
        // its kind and metadata (an empty object for metadata that was not one).
        let kept = if text(sent, "/apiVersion") == Some(desired) {
            got == sent
        } else {
            let metadata = sent
                .get("metadata")
                .filter(|metadata| metadata.is_object())
                .cloned()
                .unwrap_or_else(|| json!({}));
            text(got, "/apiVersion") == Some(desired)
                && got.get("kind") == sent.get("kind")
                && got.get("metadata") == Some(&metadata)
        };
        if !kept {
            return Err(format!(
                "converting {sent} to {desired} gave {got}: not the desired version, or a \
                 different kind or metadata"
            ));
        }
    }
    // Converted objects are already at the desired version: converting them again is a no-op.
    let again = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "again", "desiredAPIVersion": desired, "objects": converted},
    });
    let again = serde_json::to_vec(&again).map_err(|e| e.to_string())?;
    let (status, review) = answer(fixture, path, &again)?;
    let objects = review.pointer("/response/convertedObjects");
    if status != 200 || objects != Some(&Value::Array(converted.clone())) {
        return Err(format!(
            "converting the converted objects to {desired} again changed them: {review}"
        ));
    }
    Ok(())
}
