//! The fault proxy in front of the test's server — a fresh simulator, or with
//! `KUBE_RT_TEST_KUBECONFIG` the cluster it names (over TLS, with the kubeconfig's CA and
//! credentials) — with every fault observed through a real `kube::Client`.

mod common;
mod credentials;
mod same_source;
mod server_faults;
mod status;
mod watches;
mod wire;
