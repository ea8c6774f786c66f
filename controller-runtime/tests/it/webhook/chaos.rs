//! The webhook path under apiserver-sim's chaos mode: the server fails, drops (mid-request)
//! and delays its calls to a validating and a mutating webhook (both `failurePolicy: Fail`,
//! a 1 s timeout that slow calls overrun), and the webhook's certificate is rotated while
//! writes flow. Nothing unadmitted is stored, faults reach the client as webhook failures,
//! and once chaos stops every write is admitted through the rotated certificate.

use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, ChaosConfig, ChaosProfile, FaultKind};
use controller_runtime::webhook::{
    AdmissionRequest, ClientConfig, Defaulter, Denial, Validation, Validator, Warnings, Webhook,
    WebhookServer,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::ResourceExt;
use kube::api::{Api, PostParams};
use parking_lot::Mutex;
use serde_json::json;

use super::support::{TestCa, TestServer, test_config};
use crate::common::{NS, eventually};
use testkit::eventually_async;

const DEFAULTED: &str = "chaos.example.com/defaulted";
const REFUSED: &str = "refused";

struct Rules;

impl Validator<ConfigMap> for Rules {
    async fn validate_create(&self, config: &ConfigMap, _request: &AdmissionRequest) -> Validation {
        if config
            .data
            .as_ref()
            .is_some_and(|d| d.contains_key(REFUSED))
        {
            return Err(Denial::new(format!("`{REFUSED}` is not allowed")).with_code(422));
        }
        Ok(Warnings::new())
    }
}

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
            .insert(DEFAULTED.to_owned(), "true".to_owned());
        Ok(())
    }
}

/// How the creates of one phase ended.
#[derive(Debug, Default)]
struct Outcomes {
    admitted: Vec<String>,
    /// Refused by the validator (the `refused` key).
    denied: Vec<String>,
    /// Failed because a webhook call failed (the policy is Fail).
    webhook_failures: Vec<String>,
    /// Failed otherwise, 20 times in a row (injected API faults, cut connections).
    other_failures: Vec<String>,
}

/// Creates `names` from `workers` tasks; a name starting with `bad` carries the refused key.
async fn create_all(cms: &Api<ConfigMap>, names: Vec<String>, workers: usize) -> Outcomes {
    let queue = Arc::new(Mutex::new(names));
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    let tasks: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, outcomes, cms) = (Arc::clone(&queue), Arc::clone(&outcomes), cms.clone());
            tokio::spawn(async move {
                loop {
                    let Some(name) = queue.lock().pop() else {
                        return;
                    };
                    let key = if name.starts_with("bad") {
                        REFUSED
                    } else {
                        "ok"
                    };
                    let mut cm = ConfigMap::default();
                    cm.metadata.name = Some(name.clone());
                    cm.data = Some([(key.to_owned(), "v".to_owned())].into());
                    // Connection cuts and injected API faults are retried (a few times):
                    // each create ends admitted, denied or failed by a webhook call.
                    let mut attempts = 0;
                    let outcome = loop {
                        attempts += 1;
                        let result = tokio::time::timeout(
                            Duration::from_secs(10),
                            cms.create(&PostParams::default(), &cm),
                        )
                        .await;
                        match result {
                            Ok(Ok(_)) => break Ok(()),
                            // An earlier attempt was stored, its answer lost.
                            Ok(Err(kube::Error::Api(e))) if e.code == 409 => break Ok(()),
                            Ok(Err(kube::Error::Api(e)))
                                if e.message.contains("is not allowed") =>
                            {
                                break Err(Err(e.message));
                            }
                            Ok(Err(kube::Error::Api(e)))
                                if e.message.contains("failed calling webhook") =>
                            {
                                break Err(Ok(e.message));
                            }
                            Ok(Err(e)) if attempts >= 20 => break Err(Err(format!("other: {e}"))),
                            Err(_) if attempts >= 20 => break Err(Err("other: timed out".into())),
                            _ => tokio::time::sleep(Duration::from_millis(50)).await,
                        }
                    };
                    let mut o = outcomes.lock();
                    match outcome {
                        Ok(()) => o.admitted.push(name),
                        Err(Ok(webhook)) => o.webhook_failures.push(format!("{name}: {webhook}")),
                        Err(Err(other)) if other.starts_with("other: ") => {
                            o.other_failures.push(format!("{name}: {other}"));
                        }
                        Err(Err(_)) => o.denied.push(name),
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    Arc::try_unwrap(outcomes).map(Mutex::into_inner).unwrap()
}

fn names(prefix: &str, range: std::ops::Range<usize>) -> Vec<String> {
    range
        .map(|i| {
            if i % 5 == 0 {
                format!("bad-{prefix}-{i}")
            } else {
                format!("{prefix}-{i}")
            }
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_under_chaos_admit_nothing_unreviewed_and_survive_a_certificate_rotation() {
    if testkit::cluster::sim_only("chaos mode") {
        return;
    }
    let ca = TestCa::new();
    let dir = tempfile::tempdir().unwrap();
    let first = ca.issue(dir.path(), "webhook-1");
    let server =
        WebhookServer::new(test_config(dir.path()).cert_reload_interval(Duration::from_millis(50)));
    server
        .register(Webhook::validator::<ConfigMap>(Rules))
        .unwrap();
    server
        .register(Webhook::defaulter::<ConfigMap>(Defaults))
        .unwrap();
    let webhook = TestServer::start_with(ca, dir, server).await;

    let sim = ApiServer::builder()
        .chaos(ChaosConfig {
            seed: 4242,
            profile: ChaosProfile::Standard,
        })
        .start()
        .await
        .unwrap();
    let client = ClientConfig::Url(format!("https://localhost:{}", webhook.addr.port()));
    let ca_bundle = webhook.ca.pem().as_bytes().to_vec();
    let mut validating = webhook
        .server
        .validating_webhook_configuration("chaos", &client, &ca_bundle);
    let mut mutating = webhook
        .server
        .mutating_webhook_configuration("chaos", &client, &ca_bundle);
    for hook in validating.webhooks.iter_mut().flatten() {
        hook.timeout_seconds = Some(1);
    }
    for hook in mutating.webhooks.iter_mut().flatten() {
        hook.timeout_seconds = Some(1);
    }
    sim.create(&validating).unwrap();
    sim.create(&mutating).unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(sim.client().unwrap(), NS);

    // Writes under chaos, with the certificate rotated halfway.
    let before = create_all(&cms, names("a", 0..120), 4).await;
    let second = webhook.ca.issue(webhook.dir.path(), "webhook-2");
    assert_ne!(first, second);
    let after = create_all(&cms, names("b", 0..120), 4).await;
    let faults = sim.chaos_stats();
    sim.stop_chaos();

    // The rotated certificate is the one served; every write now goes through it.
    let served = || async {
        super::support::request_tls(
            webhook.addr,
            &webhook.ca.client_config(),
            "POST",
            "/nothing-here",
            Some("application/json"),
            b"{}".to_vec(),
        )
        .await
        .peer
        .map(|c| c.to_vec())
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while served().await != Some(second.to_vec()) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the rotated certificate was never served"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // A restart's downtime may still be running when chaos stops.
    eventually_async(
        "the API server answers again",
        Duration::from_secs(10),
        || {
            let cms = cms.clone();
            async move { cms.list(&Default::default()).await.is_ok() }
        },
    )
    .await;
    let calm = create_all(&cms, names("c", 0..20), 2).await;

    println!("webhook chaos: faults {faults}; before rotation {before:?}; after {after:?}");
    for kind in [
        FaultKind::WebhookError,
        FaultKind::WebhookDrop,
        FaultKind::WebhookSlow,
    ] {
        assert!(
            faults.get(kind) > 0,
            "no {} injected: {faults}",
            kind.name()
        );
    }
    for phase in [&before, &after] {
        assert!(
            !phase.admitted.is_empty(),
            "nothing admitted under chaos: {phase:?}"
        );
        assert!(
            !phase.webhook_failures.is_empty(),
            "no webhook failure reached a client: {phase:?}"
        );
        assert!(
            phase.admitted.iter().all(|n| !n.starts_with("bad")),
            "{phase:?}"
        );
    }
    assert!(
        calm.webhook_failures.is_empty() && calm.other_failures.is_empty(),
        "{calm:?}"
    );
    assert_eq!(calm.admitted.len() + calm.denied.len(), 20, "{calm:?}");
    assert!(calm.denied.iter().all(|n| n.starts_with("bad")), "{calm:?}");

    // Nothing was stored without both webhooks: every object is defaulted, none refused.
    let stored: Vec<ConfigMap> = sim.list();
    for cm in &stored {
        assert_eq!(
            cm.labels().get(DEFAULTED).map(String::as_str),
            Some("true"),
            "{} was stored without the mutating webhook",
            cm.name_any()
        );
        assert!(
            !cm.data.as_ref().is_some_and(|d| d.contains_key(REFUSED)),
            "{} was stored unvalidated",
            cm.name_any()
        );
    }
    let admitted = before.admitted.len() + after.admitted.len() + calm.admitted.len();
    eventually(
        "every admitted create is stored",
        Duration::from_secs(5),
        || sim.list::<ConfigMap>().len() >= admitted,
    )
    .await;
    assert!(webhook.server.is_serving());
    assert_eq!(json!(webhook.server.webhooks().len()), json!(2));
}
