//! Hub-and-spoke conversion on `/convert`: every object converted, metadata kept, one failure
//! failing the whole review.

use std::borrow::Cow;
use std::sync::{Condvar, Mutex};
use std::time::Duration;

use controller_runtime::webhook::{
    Conversion, ConversionError, Convertible, Error as WebhookError, WebhookServer,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::NamespaceResourceScope;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::support::{TestCa, TestServer, test_config};

/// Implements `kube::Resource` for a version of `example.com`'s `Foo`.
macro_rules! foo_version {
    ($type:ident, $version:literal) => {
        impl kube::Resource for $type {
            type DynamicType = ();
            type Scope = NamespaceResourceScope;
            fn kind(_: &()) -> Cow<'_, str> {
                "Foo".into()
            }
            fn group(_: &()) -> Cow<'_, str> {
                "example.com".into()
            }
            fn version(_: &()) -> Cow<'_, str> {
                $version.into()
            }
            fn plural(_: &()) -> Cow<'_, str> {
                "foos".into()
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

/// v1: the size as text.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct FooV1 {
    metadata: ObjectMeta,
    spec: SpecV1,
}
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SpecV1 {
    size: String,
}
foo_version!(FooV1, "v1");

/// v2, the hub: replicas.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct FooV2 {
    metadata: ObjectMeta,
    spec: SpecV2,
}
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SpecV2 {
    replicas: i32,
}
foo_version!(FooV2, "v2");

/// v3: a count and a tier.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct FooV3 {
    metadata: ObjectMeta,
    spec: SpecV3,
}
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SpecV3 {
    count: i64,
    tier: String,
}
foo_version!(FooV3, "v3");

/// Holds a "slow" conversion until the test has seen its review time out (or 10 s at most), so
/// the test never waits on the blocked conversion thread.
static SLOW_RELEASED: (Mutex<bool>, Condvar) = (Mutex::new(false), Condvar::new());

fn block_until_released() {
    let (released, wake) = &SLOW_RELEASED;
    let guard = released
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let _ = wake.wait_timeout_while(guard, Duration::from_secs(10), |released| !*released);
}

fn release_slow_conversions() {
    let (released, wake) = &SLOW_RELEASED;
    *released
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner()) = true;
    wake.notify_all();
}

impl Convertible<FooV2> for FooV1 {
    fn convert_to_hub(&self) -> Result<FooV2, ConversionError> {
        match self.spec.size.as_str() {
            "panic" => panic!("size cannot be `panic`"),
            "slow" => block_until_released(),
            _ => {}
        }
        let replicas =
            self.spec.size.parse().map_err(|error| {
                ConversionError::new(format!("size `{}`: {error}", self.spec.size))
            })?;
        // Metadata is deliberately not carried over: the server keeps the original's.
        Ok(FooV2 {
            metadata: ObjectMeta::default(),
            spec: SpecV2 { replicas },
        })
    }

    fn convert_from_hub(hub: &FooV2) -> Result<Self, ConversionError> {
        Ok(FooV1 {
            metadata: ObjectMeta::default(),
            spec: SpecV1 {
                size: hub.spec.replicas.to_string(),
            },
        })
    }
}

impl Convertible<FooV2> for FooV3 {
    fn convert_to_hub(&self) -> Result<FooV2, ConversionError> {
        Ok(FooV2 {
            metadata: self.metadata.clone(),
            spec: SpecV2 {
                replicas: i32::try_from(self.spec.count)?,
            },
        })
    }

    fn convert_from_hub(hub: &FooV2) -> Result<Self, ConversionError> {
        let mut metadata = hub.metadata.clone();
        // A conversion may set labels.
        metadata
            .labels
            .get_or_insert_default()
            .insert("converted".into(), "v3".into());
        Ok(FooV3 {
            metadata,
            spec: SpecV3 {
                count: hub.spec.replicas.into(),
                tier: if hub.spec.replicas > 2 {
                    "large"
                } else {
                    "small"
                }
                .into(),
            },
        })
    }
}

fn foo(version: &str, name: &str, spec: Value) -> Value {
    json!({
        "apiVersion": format!("example.com/{version}"),
        "kind": "Foo",
        "metadata": {
            "name": name, "namespace": "default", "uid": format!("uid-{name}"),
            "resourceVersion": "42", "generation": 3,
            "labels": {"app": "foo"}, "annotations": {"note": "kept"},
            "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": format!("example.com/{version}")}],
        },
        "spec": spec,
    })
}

fn conversion_review(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": "conversion-1", "desiredAPIVersion": desired, "objects": objects},
    })
}

async fn server(timeout: Duration) -> TestServer {
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    ca.issue(dir.path(), "webhook-1");
    let server = WebhookServer::new(test_config(dir.path()).handler_timeout(timeout));
    server
        .register_conversion(Conversion::hub::<FooV2>().spoke::<FooV1>().spoke::<FooV3>())
        .unwrap();
    TestServer::start_with(ca, dir, server).await
}

#[tokio::test]
async fn every_object_is_converted_through_the_hub_keeping_its_metadata() {
    let server = server(Duration::from_secs(10)).await;
    let review = conversion_review(
        "example.com/v3",
        vec![
            foo("v1", "a", json!({"size": "3"})),
            foo("v2", "b", json!({"replicas": 1})),
            foo("v3", "c", json!({"count": 7, "tier": "large"})),
        ],
    );
    let reply = server.post("/convert", &review).await;
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(
        (body["apiVersion"].clone(), body["kind"].clone()),
        (json!("apiextensions.k8s.io/v1"), json!("ConversionReview"))
    );
    let response = &body["response"];
    assert_eq!(response["uid"], "conversion-1");
    assert_eq!(response["result"]["status"], "Success");
    let objects = response["convertedObjects"].as_array().unwrap();
    assert_eq!(objects.len(), 3);
    let a = &objects[0];
    assert_eq!(a["apiVersion"], "example.com/v3");
    assert_eq!(a["kind"], "Foo");
    assert_eq!(a["spec"], json!({"count": 3, "tier": "large"}));
    // The original metadata, with the labels the conversion set.
    let mut metadata = foo("v1", "a", json!({}))["metadata"].clone();
    metadata["labels"]["converted"] = json!("v3");
    assert_eq!(a["metadata"], metadata);
    assert_eq!(objects[1]["spec"], json!({"count": 1, "tier": "small"}));
    assert_eq!(
        objects[2],
        foo("v3", "c", json!({"count": 7, "tier": "large"})),
        "already in the desired version"
    );

    // Down to a spoke: metadata kept although the conversion dropped it.
    let reply = server
        .post(
            "/convert",
            &conversion_review(
                "example.com/v1",
                vec![foo("v3", "c", json!({"count": 7, "tier": "x"}))],
            ),
        )
        .await;
    let converted = &reply.response()["convertedObjects"][0];
    assert_eq!(converted["spec"], json!({"size": "7"}));
    assert_eq!(converted["metadata"], foo("v3", "c", json!({}))["metadata"]);
}

#[tokio::test]
async fn one_failing_object_fails_the_whole_review() {
    let server = server(Duration::from_secs(10)).await;
    let review = conversion_review(
        "example.com/v2",
        vec![
            foo("v1", "good", json!({"size": "3"})),
            foo("v1", "bad", json!({"size": "many"})),
        ],
    );
    let response = server.post("/convert", &review).await.response();
    assert_eq!(response["uid"], "conversion-1");
    assert_eq!(response["result"]["status"], "Failure");
    assert_eq!(
        response["result"]["message"],
        "converting Foo default/bad to example.com/v2: converting it to the hub version: size `many`: invalid digit found in string"
    );
    assert_eq!(response["convertedObjects"], json!([]));

    let unknown = conversion_review("example.com/v9", vec![foo("v1", "a", json!({"size": "1"}))]);
    let message = server.post("/convert", &unknown).await.response()["result"]["message"].clone();
    assert!(
        message.as_str().unwrap().contains(
            "version v9 of example.com/Foo has no registered conversion (registered: v1, v2, v3)"
        ),
        "{message}"
    );

    // A panicking or slow conversion fails its review; the server keeps serving.
    let panicking = conversion_review(
        "example.com/v2",
        vec![foo("v1", "p", json!({"size": "panic"}))],
    );
    let message = server.post("/convert", &panicking).await.response()["result"]["message"].clone();
    assert_eq!(message, "panic: size cannot be `panic` [recovered]");
    let slow = conversion_review(
        "example.com/v2",
        vec![foo("v1", "s", json!({"size": "slow"}))],
    );
    // A server of its own with a short timeout: printing a panic's backtrace may take longer.
    let impatient = self::server(Duration::from_millis(300)).await;
    let message = impatient.post("/convert", &slow).await.response()["result"]["message"].clone();
    assert_eq!(message, "the webhook handler did not answer within 300ms");
    release_slow_conversions();
    // Bodies that are not conversion reviews: 400, with the reason in a failed review.
    for (body, message) in [
        (b"{}".to_vec(), "cannot decode the ConversionReview"),
        (
            br#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}"#.to_vec(),
            "has no `request`",
        ),
    ] {
        let reply = server
            .post_raw("/convert", Some("application/json"), body)
            .await;
        assert_eq!(reply.status, 400);
        let text = reply.response()["result"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.contains(message), "{text}");
    }
    let fine = conversion_review("example.com/v2", vec![foo("v1", "a", json!({"size": "2"}))]);
    assert_eq!(
        server.post("/convert", &fine).await.response()["result"]["status"],
        "Success"
    );
}

#[test]
fn inconsistent_conversions_are_refused_at_registration() {
    let server = WebhookServer::new(Default::default());
    assert!(matches!(
        server.register_conversion(Conversion::hub::<FooV2>()),
        Err(WebhookError::InvalidConversion(message)) if message.contains("only its hub version v2")
    ));
    assert!(matches!(
        server.register_conversion(Conversion::hub::<FooV2>().spoke::<FooV1>().spoke::<FooV1>()),
        Err(WebhookError::InvalidConversion(message)) if message.contains("version v1 of example.com/Foo is registered twice")
    ));
    server
        .register_conversion(Conversion::hub::<FooV2>().spoke::<FooV1>())
        .unwrap();
    assert!(matches!(
        server.register_conversion(Conversion::hub::<FooV2>().spoke::<FooV3>()),
        Err(WebhookError::InvalidConversion(message)) if message.contains("already registered")
    ));
}
