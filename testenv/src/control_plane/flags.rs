//! The command lines of etcd, kube-apiserver and kube-controller-manager: the flags a test
//! control plane needs, and why each is there.

use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;

use super::files::Layout;
use super::services::SERVICE_RANGE;

/// The ServiceAccount token issuer (a cluster's usual one).
const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// The loopback ports of one control plane.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ports {
    /// etcd's client port.
    pub(crate) etcd_client: u16,
    /// etcd's peer port (one member, nobody connects to it; etcd listens on it all the same).
    pub(crate) etcd_peer: u16,
    /// kube-apiserver's secure port.
    pub(crate) api: u16,
}

impl Ports {
    /// Three ports free on 127.0.0.1 now (held at once, so they differ). Another process may
    /// take one before the servers do: the start then tries again with new ones.
    pub(crate) fn free() -> std::io::Result<Self> {
        let bind = || TcpListener::bind((Ipv4Addr::LOCALHOST, 0));
        let (a, b, c) = (bind()?, bind()?, bind()?);
        Ok(Self {
            etcd_client: a.local_addr()?.port(),
            etcd_peer: b.local_addr()?.port(),
            api: c.local_addr()?.port(),
        })
    }

    /// The API server's URL.
    pub(crate) fn api_url(&self) -> String {
        format!("https://{}:{}", Ipv4Addr::LOCALHOST, self.api)
    }

    fn etcd_client_url(&self) -> String {
        format!("http://{}:{}", Ipv4Addr::LOCALHOST, self.etcd_client)
    }
}

/// etcd: one member on loopback, plain HTTP (only this machine reaches it), no fsync (a test's
/// data is thrown away, and fsync is what makes etcd slow on a shared disk). etcd's own flag
/// names, which envtest passes too, so any etcd of envtest's layout takes them.
pub(crate) fn etcd(layout: &Layout, ports: &Ports) -> Vec<String> {
    let client = ports.etcd_client_url();
    vec![
        format!("--data-dir={}", path(&layout.etcd_data())),
        format!("--listen-client-urls={client}"),
        format!("--advertise-client-urls={client}"),
        format!(
            "--listen-peer-urls=http://{}:{}",
            Ipv4Addr::LOCALHOST,
            ports.etcd_peer
        ),
        "--unsafe-no-fsync=true".to_owned(),
    ]
}

/// kube-apiserver: on loopback with the environment's serving certificate; the admin token of
/// the token file (group `system:masters`); the real RBAC authorizer alone, so any other
/// identity meets real 403s; a ServiceAccount issuer and key, so TokenRequest works and its
/// tokens authenticate; the Services' range; no endpoint reconciler (the `kubernetes`
/// Service's endpoint would be 127.0.0.1, which Endpoints validation refuses, in a loop);
/// privileged containers allowed (as envtest does). Everything else is upstream's default, the
/// default admission plugins among them; `extra` comes last.
pub(crate) fn kube_apiserver(layout: &Layout, ports: &Ports, extra: &[String]) -> Vec<String> {
    let mut flags = vec![
        format!("--etcd-servers={}", ports.etcd_client_url()),
        format!("--bind-address={}", Ipv4Addr::LOCALHOST),
        format!("--advertise-address={}", Ipv4Addr::LOCALHOST),
        format!("--secure-port={}", ports.api),
        format!("--tls-cert-file={}", path(&layout.serving_cert())),
        format!("--tls-private-key-file={}", path(&layout.serving_key())),
        format!("--token-auth-file={}", path(&layout.tokens())),
        "--authorization-mode=RBAC".to_owned(),
        format!("--service-account-issuer={ISSUER}"),
        format!(
            "--service-account-key-file={}",
            path(&layout.service_account_pub())
        ),
        format!(
            "--service-account-signing-key-file={}",
            path(&layout.service_account_key())
        ),
        format!("--service-cluster-ip-range={SERVICE_RANGE}"),
        "--endpoint-reconciler-type=none".to_owned(),
        "--allow-privileged=true".to_owned(),
    ];
    flags.extend_from_slice(extra);
    flags
}

/// kube-controller-manager: every default controller (garbage collector, namespace, workload,
/// ServiceAccount and root-CA controllers …) with the admin's credentials, signing
/// ServiceAccount tokens with the API server's key and publishing its serving CA as
/// `kube-root-ca.crt`. The controllers share the admin's identity rather than each taking a
/// ServiceAccount of its own (`--use-service-account-credentials`): with their own accounts its
/// log shows them starting one after another, each waiting for its account's token, so the
/// controller-manager needs seconds before it works instead of a fraction of one; what the
/// controllers do is the same.
/// One instance: no leader election; no port of its own to serve.
pub(crate) fn kube_controller_manager(layout: &Layout) -> Vec<String> {
    vec![
        format!("--kubeconfig={}", path(&layout.kubeconfig())),
        "--controllers=*".to_owned(),
        format!(
            "--service-account-private-key-file={}",
            path(&layout.service_account_key())
        ),
        format!("--root-ca-file={}", path(&layout.ca())),
        "--use-service-account-credentials=false".to_owned(),
        "--leader-elect=false".to_owned(),
        "--secure-port=0".to_owned(),
    ]
}

fn path(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
