//! Webhook serving certificates are verified as kube-apiserver's Go client verifies them:
//! the common self-signed certificate made by `openssl req -x509 ... -addext
//! subjectAltName=IP:127.0.0.1` (which OpenSSL marks `CA:TRUE`) is accepted when it is its
//! own `caBundle` — the real server calls such a webhook, a WebPKI verifier refuses it as
//! `CaUsedAsEndEntity` — while a wrong name, an untrusted issuer, an insecure signature or a
//! certificate for client authentication only fail the call with Go's message. The
//! certificates are OpenSSL-made fixtures (`certs/`, see its README).

use super::harness::{Reply, WebhookServer, admit, configuration, rules, webhook};
use super::{cm, configure, send};
use crate::common;

use apiserver_sim::ApiServer;
use serde_json::{Value, json};

const CMS: &str = "/api/v1/namespaces/default/configmaps";

macro_rules! cert {
    ($name:literal) => {
        include_bytes!(concat!("certs/", $name)).as_slice()
    };
}

/// A server whose ConfigMap writes go through a validating webhook served with `cert`/`key`,
/// trusted through `ca_bundle`, called by `host`; the webhook allows everything and warns.
async fn call_through(
    cert: &[u8],
    key: &[u8],
    ca_bundle: &[u8],
    host: &str,
) -> (ApiServer, WebhookServer, common::Raw) {
    let hook = WebhookServer::start_with_pem(cert, key, ca_bundle, |_, r| {
        Reply::ok(admit(r, json!({"warnings": ["checked by the webhook"]})))
    })
    .await;
    let server = common::server().await;
    let port = hook.url.rsplit(':').next().unwrap_or_default().to_string();
    let url = format!("https://{host}:{port}/validate");
    let mut w = webhook(
        "certs.example.com",
        json!({"url": url, "caBundle": hook.ca_bundle}),
        rules("configmaps"),
    );
    w["failurePolicy"] = json!("Fail");
    configure(
        &server,
        configuration("ValidatingWebhookConfiguration", "certs", vec![w]),
    );
    let r = send(&server, "POST", CMS, &cm("a", json!({}))).await;
    (server, hook, r)
}

/// Certificate, key, `caBundle`, host called, the expected part of the error.
type Case = (
    &'static [u8],
    &'static [u8],
    &'static [u8],
    &'static str,
    &'static str,
);

fn message(r: &common::Raw) -> String {
    r.json()["message"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn openssl_self_signed_ca_certificate_as_its_own_bundle_is_accepted() {
    for (crt, key, host) in [
        (
            cert!("self-signed.crt"),
            cert!("self-signed.key"),
            "127.0.0.1",
        ),
        (
            cert!("self-signed-ec.crt"),
            cert!("self-signed-ec.key"),
            "localhost",
        ),
    ] {
        let (_server, hook, r) = call_through(crt, key, crt, host).await;
        assert_eq!(r.status, 201, "{}", r.body);
        assert_eq!(
            super::warnings(&r),
            vec!["299 - \"checked by the webhook\""]
        );
        assert_eq!(hook.reviews("/validate").len(), 1);
    }
    // Signed by an authority, with the authority as bundle.
    let (_server, hook, r) = call_through(
        cert!("leaf.crt"),
        cert!("leaf.key"),
        cert!("ca.crt"),
        "127.0.0.1",
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    assert_eq!(hook.reviews("/validate").len(), 1);
}

#[tokio::test]
async fn certificates_the_real_server_refuses_fail_the_call() {
    let cases: [Case; 5] = [
        (
            cert!("wrong-name.crt"),
            cert!("wrong-name.key"),
            cert!("wrong-name.crt"),
            "127.0.0.1",
            "tls: failed to verify certificate: x509: certificate is valid for 127.0.0.2, not 127.0.0.1",
        ),
        (
            cert!("self-signed.crt"),
            cert!("self-signed.key"),
            cert!("ca.crt"),
            "127.0.0.1",
            "tls: failed to verify certificate: x509: certificate signed by unknown authority",
        ),
        (
            cert!("self-signed.crt"),
            cert!("self-signed.key"),
            cert!("self-signed.crt"),
            "localhost",
            "tls: failed to verify certificate: x509: certificate is not valid for any names, but wanted to match localhost",
        ),
        (
            cert!("leaf-sha1.crt"),
            cert!("leaf.key"),
            cert!("ca.crt"),
            "127.0.0.1",
            "insecure algorithm SHA1-RSA",
        ),
        (
            cert!("leaf-client-auth.crt"),
            cert!("leaf.key"),
            cert!("ca.crt"),
            "127.0.0.1",
            "tls: failed to verify certificate: x509: certificate specifies an incompatible key usage",
        ),
    ];
    for (crt, key, bundle, host, expected) in cases {
        let (_server, hook, r) = call_through(crt, key, bundle, host).await;
        assert_eq!(r.status, 500, "{}", r.body);
        let message = message(&r);
        assert!(
            message.starts_with("Internal error occurred: failed calling webhook \"certs.example.com\": failed to call webhook: Post \"https://")
                && message.contains(expected),
            "{message}"
        );
        assert!(hook.requests.lock().is_empty());
    }
}

/// The refusal names what a webhook author must fix; the object is not stored.
#[tokio::test]
async fn a_refused_certificate_stores_nothing() {
    let (server, _hook, r) = call_through(
        cert!("wrong-name.crt"),
        cert!("wrong-name.key"),
        cert!("wrong-name.crt"),
        "127.0.0.1",
    )
    .await;
    assert_eq!(r.status, 500);
    let stored: Vec<Value> = server.objects("", "configmaps");
    assert!(stored.iter().all(|o| o["metadata"]["name"] != "a"));
}
