//! The webhook side of `pipeline-bench admission`: controller-runtime's `WebhookServer` with a
//! validating and a defaulting webhook for ConfigMaps that count their calls, its certificate
//! made at start, and the two webhook configurations that route the simulator to it.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Result;
use controller_runtime::webhook::{
    AdmissionRequest, ClientConfig, Defaulter, Denial, Validation, Validator, Webhook,
    WebhookServer, WebhookServerConfig,
};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::ConfigMap;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// Name of both webhook configurations.
pub const CONFIGURATION_NAME: &str = "pipeline-bench";
/// The label the defaulting webhook sets on every ConfigMap it sees.
pub const DEFAULTED_LABEL: &str = "bench.pipeline/defaulted";

/// Calls the webhooks answered.
#[derive(Debug, Default)]
pub struct Calls {
    /// Validating webhook calls.
    pub validated: AtomicU64,
    /// Defaulting webhook calls.
    pub defaulted: AtomicU64,
}

impl Calls {
    /// `(validated, defaulted)` so far.
    pub fn snapshot(&self) -> (u64, u64) {
        (
            self.validated.load(Ordering::SeqCst),
            self.defaulted.load(Ordering::SeqCst),
        )
    }
}

/// Refuses ConfigMaps with more than 100 keys (none of the benchmark's): a realistic check that
/// decodes the object.
struct SmallConfigMaps(Arc<Calls>);

impl Validator<ConfigMap> for SmallConfigMaps {
    async fn validate_create(&self, config: &ConfigMap, _: &AdmissionRequest) -> Validation {
        self.0.validated.fetch_add(1, Ordering::SeqCst);
        let keys = config.data.as_ref().map_or(0, |data| data.len());
        if keys > 100 {
            return Err(Denial::new(format!("{keys} keys; at most 100 are allowed")));
        }
        Ok(Vec::new())
    }
}

/// Sets [`DEFAULTED_LABEL`] (the server answers with a JSON patch).
struct LabelDefaulter(Arc<Calls>);

impl Defaulter<ConfigMap> for LabelDefaulter {
    async fn default(&self, config: &mut ConfigMap, _: &AdmissionRequest) -> Result<(), Denial> {
        self.0.defaulted.fetch_add(1, Ordering::SeqCst);
        config
            .metadata
            .labels
            .get_or_insert_default()
            .insert(DEFAULTED_LABEL.to_owned(), "true".to_owned());
        Ok(())
    }
}

/// The running webhook server and what routes the simulator to it.
pub struct BenchWebhooks {
    /// Calls answered so far.
    pub calls: Arc<Calls>,
    /// The validating configuration (URL client config, the CA as `caBundle`).
    pub validating: ValidatingWebhookConfiguration,
    /// The mutating configuration.
    pub mutating: MutatingWebhookConfiguration,
    _certs: TempDir,
}

impl BenchWebhooks {
    /// Makes a CA and a serving certificate for 127.0.0.1, and starts the server on a free
    /// port of 127.0.0.1 until `shutdown`.
    pub async fn start(shutdown: CancellationToken) -> Result<Self> {
        let certs = tempfile::tempdir()?;
        let ca_pem = issue_certificates(&certs)?;
        let server = WebhookServer::new(
            WebhookServerConfig::new()
                .host(Ipv4Addr::LOCALHOST.into())
                .port(0)
                .cert_dir(certs.path()),
        );
        let calls = Arc::new(Calls::default());
        server.register(Webhook::validator::<ConfigMap>(SmallConfigMaps(
            Arc::clone(&calls),
        )))?;
        server.register(Webhook::defaulter::<ConfigMap>(LabelDefaulter(Arc::clone(
            &calls,
        ))))?;
        let address = server.start(shutdown).await?;
        let client = ClientConfig::url(format!("https://{address}"));
        Ok(Self {
            calls,
            validating: server.validating_webhook_configuration(
                CONFIGURATION_NAME,
                &client,
                ca_pem.as_bytes(),
            ),
            mutating: server.mutating_webhook_configuration(
                CONFIGURATION_NAME,
                &client,
                ca_pem.as_bytes(),
            ),
            _certs: certs,
        })
    }
}

/// Writes `tls.crt` and `tls.key` for 127.0.0.1 into `dir`, signed by a new CA; returns the CA's
/// PEM.
fn issue_certificates(dir: &TempDir) -> Result<String> {
    let ca_key = KeyPair::generate()?;
    let mut ca = CertificateParams::new(Vec::<String>::new())?;
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "pipeline-bench CA");
    let ca_pem = ca.self_signed(&ca_key)?.pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate()?;
    let serving = CertificateParams::new(vec!["127.0.0.1".to_owned()])?;
    let cert = serving.signed_by(&key, &issuer)?;
    std::fs::write(dir.path().join("tls.crt"), cert.pem())?;
    std::fs::write(dir.path().join("tls.key"), key.serialize_pem())?;
    Ok(ca_pem)
}
