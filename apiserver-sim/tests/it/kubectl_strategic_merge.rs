//! `kubectl apply` (client-side: a strategic merge patch) of a file, then of the same file
//! with one field of one list item changed: the item is merged with the stored one by its
//! list's merge key (a webhook by `name`, a Service port by `port`), so the change takes
//! effect and the item keeps what the server defaulted. Skipped (with a notice) when
//! `kubectl` is not installed.

use crate::common;

use apiserver_sim::ApiServer;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::core::v1::Service;
use kube::api::Api;
use serde_json::Value;

/// A validating webhook configuration whose one webhook has `failure_policy` (its rule
/// matches a resource nothing writes, so the webhook is never called).
fn webhook_configuration(failure_policy: &str) -> String {
    format!(
        "apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: merge-keys
webhooks:
- name: check.merge-keys.example.com
  failurePolicy: {failure_policy}
  sideEffects: None
  admissionReviewVersions: [v1]
  clientConfig:
    url: https://127.0.0.1:9/validate
  rules:
  - apiGroups: [example.invalid]
    apiVersions: [v1]
    operations: [CREATE]
    resources: [nothings]
"
    )
}

/// A Service with two ports, the second forwarded to `target`.
fn service(target: u16) -> String {
    format!(
        "apiVersion: v1
kind: Service
metadata:
  name: merge-keys
  namespace: default
spec:
  selector:
    app: merge-keys
  ports:
  - name: http
    port: 80
    targetPort: 8080
  - name: metrics
    port: 9090
    targetPort: {target}
"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_apply_merges_list_items_by_their_merge_key() {
    let Some((server, dir, k)) =
        common::kubectl::start("the kubectl strategic merge test", ApiServer::builder()).await
    else {
        return;
    };
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).expect("write manifest");
        path.to_string_lossy().to_string()
    };

    let ignore = write("ignore.yaml", webhook_configuration("Ignore"));
    let fail = write("fail.yaml", webhook_configuration("Fail"));
    let out = k.ok(&["apply", "-f", &ignore]).await;
    assert!(out.contains("created"), "{out}");
    let out = k.ok(&["apply", "-f", &fail]).await;
    assert!(
        out.contains(
            "validatingwebhookconfiguration.admissionregistration.k8s.io/merge-keys configured"
        ),
        "{out}"
    );
    let api: Api<ValidatingWebhookConfiguration> = Api::all(server.client().expect("client"));
    let vwc = serde_json::to_value(api.get("merge-keys").await.expect("get")).expect("json");
    let hook = &vwc["webhooks"][0];
    assert_eq!(vwc["webhooks"].as_array().map(Vec::len), Some(1), "{vwc}");
    assert_eq!(hook["failurePolicy"], "Fail", "{vwc}");
    assert_eq!(hook["sideEffects"], "None", "{vwc}");
    assert_eq!(hook["admissionReviewVersions"][0], "v1", "{vwc}");
    assert_eq!(hook["clientConfig"]["url"], "https://127.0.0.1:9/validate");
    // Defaults the server filled in on create survive the merge.
    assert_eq!(hook["matchPolicy"], "Equivalent", "{vwc}");
    assert_eq!(vwc["metadata"]["generation"], 2, "{vwc}");

    let first = write("service-1.yaml", service(9091));
    let second = write("service-2.yaml", service(9092));
    k.ok(&["apply", "-f", &first]).await;
    let out = k.ok(&["apply", "-f", &second]).await;
    assert!(out.contains("service/merge-keys configured"), "{out}");
    let api: Api<Service> = Api::default_namespaced(server.client().expect("client"));
    let svc = serde_json::to_value(api.get("merge-keys").await.expect("get")).expect("json");
    let ports: Vec<(Value, Value, Value)> = svc["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["name"].clone(),
                p["port"].clone(),
                p["targetPort"].clone(),
            )
        })
        .collect();
    assert_eq!(
        ports,
        [
            ("http".into(), 80.into(), 8080.into()),
            ("metrics".into(), 9090.into(), 9092.into())
        ],
        "{svc}"
    );
    // The protocol the server defaulted stays on both.
    assert!(
        svc["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|p| p["protocol"] == "TCP"),
        "{svc}"
    );
}
