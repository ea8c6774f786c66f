//! The control plane's data directory: where each file lives, and the credentials written
//! there — the API server's serving certificate and its CA, the ServiceAccount signing key, the
//! admin token, and the admin kubeconfig.

use std::io;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use kube::config::{
    AuthInfo, Cluster, Context, Kubeconfig, NamedAuthInfo, NamedCluster, NamedContext,
};

use super::services::SERVICE_IP;
use crate::pki::{self, PkiError};

/// The admin user's name in the token file and the kubeconfig.
const ADMIN: &str = "kube-rt-testenv-admin";

/// What a client of the control plane needs: the CA to trust and the admin token.
#[derive(Clone)]
pub(crate) struct Credentials {
    /// The CA's certificate, PEM.
    pub(crate) ca_pem: String,
    /// The CA's certificate, DER.
    pub(crate) ca_der: Vec<u8>,
    /// The admin's bearer token.
    pub(crate) token: String,
}

/// The paths of a control plane's files under its data directory.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    root: PathBuf,
}

impl Layout {
    /// The layout under `root`.
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
        }
    }

    /// etcd's data directory.
    pub(crate) fn etcd_data(&self) -> PathBuf {
        self.root.join("etcd")
    }

    /// The CA that signed the API server's serving certificate (what clients trust).
    pub(crate) fn ca(&self) -> PathBuf {
        self.root.join("ca.crt")
    }

    /// The API server's serving certificate.
    pub(crate) fn serving_cert(&self) -> PathBuf {
        self.root.join("apiserver.crt")
    }

    /// The API server's serving key.
    pub(crate) fn serving_key(&self) -> PathBuf {
        self.root.join("apiserver.key")
    }

    /// The ServiceAccount token signing key (private).
    pub(crate) fn service_account_key(&self) -> PathBuf {
        self.root.join("sa.key")
    }

    /// The ServiceAccount token verification key (public).
    pub(crate) fn service_account_pub(&self) -> PathBuf {
        self.root.join("sa.pub")
    }

    /// The API server's static token file.
    pub(crate) fn tokens(&self) -> PathBuf {
        self.root.join("tokens.csv")
    }

    /// The admin kubeconfig.
    pub(crate) fn kubeconfig(&self) -> PathBuf {
        self.root.join("kubeconfig")
    }

    /// The log of the process `name`.
    pub(crate) fn log(&self, name: &str) -> PathBuf {
        self.root.join(format!("{name}.log"))
    }

    /// Makes and writes the credentials.
    pub(crate) fn write_credentials(&self) -> Result<Credentials, PkiError> {
        let names = [
            Ipv4Addr::LOCALHOST.to_string(),
            "localhost".to_owned(),
            SERVICE_IP.to_owned(),
            "kubernetes".to_owned(),
            "kubernetes.default".to_owned(),
            "kubernetes.default.svc".to_owned(),
            "kubernetes.default.svc.cluster.local".to_owned(),
        ];
        let serving = pki::serving("kube-rt-testenv control plane", &names)?;
        let (signing_key, verifying_key) = pki::signing_key()?;
        let token = pki::random_hex(24)?;
        write_private(&self.ca(), &serving.ca_pem)?;
        write_private(&self.serving_cert(), &serving.cert_pem)?;
        write_private(&self.serving_key(), &serving.key_pem)?;
        write_private(&self.service_account_key(), &signing_key)?;
        write_private(&self.service_account_pub(), &verifying_key)?;
        // token,user,uid,"groups": system:masters passes every authorizer, RBAC included.
        write_private(
            &self.tokens(),
            &format!("{token},{ADMIN},{ADMIN},\"system:masters\"\n"),
        )?;
        Ok(Credentials {
            ca_pem: serving.ca_pem,
            ca_der: serving.ca_der,
            token,
        })
    }

    /// Writes the admin kubeconfig for the API server at `url`.
    pub(crate) fn write_kubeconfig(&self, url: &str, token: &str) -> Result<(), PkiError> {
        let name = "kube-rt-testenv".to_owned();
        let kubeconfig = Kubeconfig {
            api_version: Some("v1".to_owned()),
            kind: Some("Config".to_owned()),
            clusters: vec![NamedCluster {
                name: name.clone(),
                cluster: Some(Cluster {
                    server: Some(url.to_owned()),
                    certificate_authority: Some(self.ca().to_string_lossy().into_owned()),
                    ..Cluster::default()
                }),
                ..NamedCluster::default()
            }],
            auth_infos: vec![NamedAuthInfo {
                name: ADMIN.to_owned(),
                auth_info: Some(AuthInfo {
                    token: Some(token.to_owned().into()),
                    ..AuthInfo::default()
                }),
                ..NamedAuthInfo::default()
            }],
            contexts: vec![NamedContext {
                name: name.clone(),
                context: Some(Context {
                    cluster: name.clone(),
                    user: Some(ADMIN.to_owned()),
                    ..Context::default()
                }),
                ..NamedContext::default()
            }],
            current_context: Some(name),
            ..Kubeconfig::default()
        };
        write_private(&self.kubeconfig(), &serde_yaml::to_string(&kubeconfig)?)?;
        Ok(())
    }
}

/// Writes `text` to `path`, readable by this user only (the directory is private too).
fn write_private(path: &Path, text: &str) -> io::Result<()> {
    let mut options = std::fs::File::options();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    io::Write::write_all(&mut options.open(path)?, text.as_bytes())
}
