//! Versions of custom resources: with `spec.conversion.strategy: None` an object changes
//! version by its `apiVersion` alone; with `Webhook` the CRD's conversion webhook converts it
//! (`ConversionReview` apiextensions.k8s.io/v1), as a real server does whenever an object is
//! read or written in a version other than the stored one (apiextensions-apiserver
//! `conversion/webhook_converter.go`). Built-in types change version by `apiVersion`, or
//! from their stored form by their own conversion (events.k8s.io events, autoscaling/v1
//! horizontal pod autoscalers).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::endpoints::ServiceEndpoints;
use super::review::Failure;
use crate::machinery::pointer::{owned_strings, text};
use crate::machinery::resource_info::{GroupResourceRef, ResourceInfo};
use crate::store::State;

/// How long a conversion webhook may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// The conversion webhook of a CRD.
#[derive(Debug, Clone)]
struct ConversionWebhook {
    client_config: Value,
    review_versions: Vec<String>,
}

/// Converts objects of one resource between its versions.
#[derive(Debug, Clone)]
pub struct Converter {
    info: Arc<ResourceInfo>,
    webhook: Option<ConversionWebhook>,
    endpoints: ServiceEndpoints,
}

/// The conversion webhook configured on the CRD serving `info`, if its strategy is Webhook.
fn crd_webhook(st: &State, info: &ResourceInfo) -> Option<ConversionWebhook> {
    if info.builtin {
        return None;
    }
    let key = GroupResourceRef::new("apiextensions.k8s.io", "customresourcedefinitions");
    let crd = st.get(
        &key,
        &(String::new(), format!("{}.{}", info.plural, info.group)),
    )?;
    let conversion = crd.pointer("/spec/conversion")?;
    if conversion.get("strategy").and_then(Value::as_str) != Some("Webhook") {
        return None;
    }
    let hook = conversion.get("webhook");
    Some(ConversionWebhook {
        client_config: hook
            .and_then(|h| h.get("clientConfig"))
            .cloned()
            .unwrap_or(Value::Null),
        review_versions: hook
            .map(|h| owned_strings(h, "/conversionReviewVersions"))
            .unwrap_or_default(),
    })
}

fn api_version(obj: &Value) -> &str {
    obj.get("apiVersion").and_then(Value::as_str).unwrap_or("")
}

/// The converted object keeps the original's metadata, except labels and annotations.
fn restore_metadata(original: &Value, converted: &mut Value) -> Result<(), String> {
    let Some(new_md) = converted
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
    else {
        return Err("missing metadata in converted object".into());
    };
    for (field, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let a = original
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str);
        let b = new_md.get(field).and_then(Value::as_str);
        if a.unwrap_or("") != b.unwrap_or("") {
            return Err(format!(
                "must have the same {what}: {} != {}",
                a.unwrap_or(""),
                b.unwrap_or("")
            ));
        }
    }
    let mut md: Map<String, Value> = original
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for field in ["labels", "annotations"] {
        match new_md.get(field) {
            None | Some(Value::Null) => {
                md.remove(field);
            }
            Some(Value::Object(m)) if m.values().all(Value::is_string) => {
                md.insert(field.into(), Value::Object(m.clone()));
            }
            Some(_) => return Err(format!("invalid metadata.{field} in converted object")),
        }
    }
    if let Some(m) = converted.as_object_mut() {
        m.insert("metadata".into(), Value::Object(md));
    }
    Ok(())
}

impl Converter {
    /// The converter of `info`'s objects, as its CRD is configured now.
    pub fn new(st: &State, info: &Arc<ResourceInfo>, endpoints: &ServiceEndpoints) -> Self {
        Converter {
            info: info.clone(),
            webhook: crd_webhook(st, info),
            endpoints: endpoints.clone(),
        }
    }

    /// Whether conversions go through a webhook.
    pub fn uses_webhook(&self) -> bool {
        self.webhook.is_some()
    }

    /// Converts one object to `version`.
    pub async fn convert(&self, obj: Value, version: &str) -> Result<Value, Failure> {
        let mut out = self.convert_all(vec![obj], version).await?;
        out.pop()
            .ok_or_else(|| Failure::internal("conversion returned no object"))
    }

    /// Converts objects to `version`; those already in it are left alone (and not sent).
    pub async fn convert_all(
        &self,
        mut objs: Vec<Value>,
        version: &str,
    ) -> Result<Vec<Value>, Failure> {
        let desired = self.info.api_version(version);
        let todo: Vec<usize> = (0..objs.len())
            .filter(|i| api_version(&objs[*i]) != desired)
            .collect();
        if todo.is_empty() {
            return Ok(objs);
        }
        let Some(hook) = &self.webhook else {
            for i in todo {
                objs[i] = self.info.to_served(version, &objs[i]);
            }
            return Ok(objs);
        };
        let from = api_version(&objs[todo[0]]).to_string();
        let (group, from_version) = from.split_once('/').unwrap_or(("", from.as_str()));
        let gvk = format!("{group}/{from_version}, Kind={}", self.info.kind);
        let fail =
            |why: String| Failure::internal(&format!("conversion webhook for {gvk} failed: {why}"));
        let sent: Vec<Value> = todo.iter().map(|i| objs[*i].clone()).collect();
        let converted = self.call(hook, sent, &desired).await.map_err(fail)?;
        if converted.len() != todo.len() {
            return Err(Failure::internal(&format!(
                "conversion webhook for {gvk} returned {} objects, expected {}",
                converted.len(),
                todo.len()
            )));
        }
        for (index, (i, mut new)) in todo.into_iter().zip(converted).enumerate() {
            let invalid = |why: String| {
                Failure::internal(&format!(
                    "conversion webhook for {gvk} returned invalid converted object at index {index}: {why}"
                ))
            };
            if api_version(&new) != desired {
                return Err(invalid(format!(
                    "invalid groupVersion (expected {desired}, received {})",
                    api_version(&new)
                )));
            }
            let kind = new.get("kind").and_then(Value::as_str).unwrap_or("");
            if kind != self.info.kind {
                return Err(invalid(format!(
                    "invalid kind (expected {}, received {kind})",
                    self.info.kind
                )));
            }
            restore_metadata(&objs[i], &mut new).map_err(invalid)?;
            objs[i] = new;
        }
        Ok(objs)
    }

    /// One `ConversionReview` round trip; the converted objects, or why it failed.
    async fn call(
        &self,
        hook: &ConversionWebhook,
        objects: Vec<Value>,
        desired: &str,
    ) -> Result<Vec<Value>, String> {
        let version = hook
            .review_versions
            .iter()
            .find(|v| *v == "v1" || *v == "v1beta1")
            .ok_or("no supported conversion review versions")?;
        let target = self
            .endpoints
            .resolve(&hook.client_config)
            .map_err(|(url, why)| format!("Post {url:?}: {why}"))?;
        let uid = crate::machinery::meta::new_uid();
        let review = json!({
            "apiVersion": format!("apiextensions.k8s.io/{version}"),
            "kind": "ConversionReview",
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects},
        });
        let answer = super::client::post(&target, &review, TIMEOUT, None).await?;
        if version == "v1" {
            let (av, kind) = (text(&answer, "/apiVersion"), text(&answer, "/kind"));
            if av != "apiextensions.k8s.io/v1" || kind != "ConversionReview" {
                return Err(format!(
                    "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {av}, Kind={kind}"
                ));
            }
        }
        let resp = answer.get("response").ok_or("no response provided")?;
        let got = resp.get("uid").and_then(Value::as_str).unwrap_or("");
        if version == "v1" && got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
        let result = resp.get("result").unwrap_or(&Value::Null);
        let status = result.get("status").and_then(Value::as_str).unwrap_or("");
        if status != "Success" {
            let message = result.get("message").and_then(Value::as_str).unwrap_or("");
            if !message.is_empty() {
                return Err(message.to_string());
            }
            return Err(format!(
                "response.result.status was '{status}', not 'Success'"
            ));
        }
        Ok(resp
            .get("convertedObjects")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default())
    }
}
