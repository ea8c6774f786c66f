//! Status faults — the simulator's `FailRule`s — answered by the proxy as a server answers:
//! 500, 503, 410 as a list status, 429 with `Retry-After`, 410 in band on a watch; selected by
//! namespace and drawn at random as the simulator selects and draws them.

use apiserver_sim::{ApiServer, FailRule};
use futures::StreamExt;
use http::header;
use kube::api::WatchParams;
use kube::core::WatchEvent;
use testkit::fault::InjectFaults;

use crate::common::*;

/// The status of a failed request, or `None` when it succeeded.
fn code<T>(result: Result<T, kube::Error>) -> Option<u16> {
    match result {
        Ok(_) => None,
        Err(kube::Error::Api(status)) => Some(status.code),
        Err(other) => panic!("not an API error: {other:?}"),
    }
}

#[tokio::test]
async fn status_faults_are_answered_as_the_server_answers_errors() {
    let (cluster, proxy) = proxied().await;
    cluster.put("a", "1").await.unwrap();
    let api = config_maps(without_retry(&proxy));
    let params = kube::api::ListParams::default();
    let list = || api.list(&params);
    proxy.fail_next(FailRule::new("list", "configmaps", 500, 2));
    proxy.fail_next(FailRule::new("list", "configmaps", 503, 1));
    proxy.fail_next(FailRule::new("list", "configmaps", 410, 1));
    assert_eq!(code(list().await), Some(500));
    assert_eq!(code(list().await), Some(500));
    assert_eq!(code(list().await), Some(503));
    let Err(kube::Error::Api(expired)) = list().await else {
        panic!("the 410 did not come");
    };
    assert_eq!((expired.code, expired.reason.as_str()), (410, "Expired"));
    // Used up: the next list reaches the server.
    let listed = list().await.unwrap();
    assert!(
        listed
            .items
            .iter()
            .any(|cm| cm.metadata.name.as_deref() == Some("a"))
    );
    // Other verbs and resources were never selected.
    proxy.fail_next(FailRule::new("list", "secrets", 500, 1));
    proxy.fail_next(FailRule::new("get", "configmaps", 500, 1));
    assert!(list().await.is_ok());
    assert_eq!(proxy.faults().len(), 2);
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_429_carries_retry_after_in_its_header_and_status() {
    let (cluster, proxy) = proxied().await;
    let client = without_retry(&proxy);
    proxy.fail_next(FailRule::new("list", "configmaps", 429, 1));
    proxy.fail_next(FailRule::new("list", "configmaps", 429, 1).retry_after(7));
    for seconds in [1, 7] {
        let raw = raw_get(&client, &config_maps_path("limit=5")).await;
        assert_eq!(raw.status, 429);
        assert_eq!(raw.headers[header::RETRY_AFTER], seconds.to_string());
        let status: serde_json::Value = serde_json::from_slice(&raw.body).unwrap();
        assert_eq!(status["reason"], "TooManyRequests");
        assert_eq!(status["details"]["retryAfterSeconds"], seconds);
    }
    assert_eq!(
        raw_get(&client, &config_maps_path("limit=5")).await.status,
        200
    );
    cluster.shutdown().await;
}

#[tokio::test]
async fn an_in_band_410_is_one_error_event_that_ends_the_watch() {
    let (cluster, proxy) = proxied().await;
    let api = config_maps(proxy.client().unwrap());
    let rv = list_version(&api).await;
    proxy.fail_next(FailRule::new("watch", "configmaps", 410, 1).in_band());
    let mut events = watch_from(&api, &rv).await;
    let Some(Ok(WatchEvent::Error(status))) = events.next().await else {
        panic!("no ERROR event");
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    assert!(events.next().await.is_none(), "the watch went on");
    // Without `in_band` a watch gets the HTTP error.
    proxy.fail_next(FailRule::new("watch", "configmaps", 410, 1));
    let Err(kube::Error::Api(status)) = api.watch(&WatchParams::default(), &rv).await else {
        panic!("the watch opened");
    };
    assert_eq!(status.code, 410);
    cluster.shutdown().await;
}

#[tokio::test]
async fn a_namespaced_fault_selects_only_its_namespace() {
    let (cluster, proxy) = proxied().await;
    let client = without_retry(&proxy);
    proxy.fail_next(FailRule::new("list", "configmaps", 500, 1).in_namespace("elsewhere"));
    assert!(
        config_maps(client.clone())
            .list(&Default::default())
            .await
            .is_ok()
    );
    let elsewhere: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(client, "elsewhere");
    assert_eq!(code(elsewhere.list(&Default::default()).await), Some(500));
    cluster.shutdown().await;
}

/// Which of `n` lists of `api` fail.
async fn failures(api: &kube::Api<k8s_openapi::api::core::v1::ConfigMap>, n: usize) -> Vec<bool> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(api.list(&Default::default()).await.is_err());
    }
    out
}

#[tokio::test]
async fn a_random_fault_fails_the_requests_the_simulators_own_rule_fails() {
    let rule = FailRule::random("list", "configmaps", 500, 0.3, 42);
    let sim = ApiServer::start().await.unwrap();
    sim.fail_next(rule.clone());
    let on_the_simulator = failures(&config_maps(sim.client().unwrap()), 64).await;
    let (cluster, proxy) = proxied().await;
    proxy.inject(rule).unwrap();
    let behind_the_proxy = failures(&config_maps(without_retry(&proxy)), 64).await;
    assert_eq!(behind_the_proxy, on_the_simulator);
    let hits = on_the_simulator.iter().filter(|failed| **failed).count();
    assert!((5..40).contains(&hits), "{hits} of 64");
    cluster.shutdown().await;
    sim.shutdown().await;
}
