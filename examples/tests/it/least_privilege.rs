//! The shipped RBAC manifests are enough and nothing more: the sample-controller runs as its
//! ServiceAccount (a token from the simulator, RBAC on) with `cluster-role.yaml` bound by
//! `cluster-role-binding.yaml`, and reconciles a Foo (Deployment created, status updated,
//! event recorded, lease held) without one refusal; then, for each rule of the role, the role
//! without that rule makes a named operation fail with 403 Forbidden. One server serves every
//! case; each case runs a fresh manager on a fresh Foo and stops it once the refusal came.

use crate::common;

use apiserver_sim::{ApiServer, Denial};
use common::DEADLINE;
use controller_runtime::Manager;
use examples::cluster::install_crd;
use examples::foo::{Foo, crd, new_foo};
use examples::sample::{self, LEASE_NAME, Settings};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule};
use kube::api::{DeleteParams, PostParams};
use kube::{Api, Client, ResourceExt};
use tokio_util::sync::CancellationToken;

/// Where the manifests deploy the controller (its ServiceAccount and Lease).
const NAMESPACE: &str = "default";

fn manifest<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let path = format!("{}/manifests/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `group/resource[names]` of a rule, as the cases below name it.
fn rule_id(rule: &PolicyRule) -> String {
    let group = rule.api_groups.as_deref().unwrap_or_default().join(",");
    let resource = rule.resources.as_deref().unwrap_or_default().join(",");
    match rule.resource_names.as_deref() {
        Some(names) if !names.is_empty() => format!("{group}/{resource}[{}]", names.join(",")),
        _ => format!("{group}/{resource}"),
    }
}

/// For each rule of the role: the operation that fails without it (verb, group, resource).
const NEEDED_FOR: &[(&str, (&str, &str, &str))] = &[
    // The Foo informer's initial list.
    (
        "samplecontroller.k8s.io/foos",
        ("list", "samplecontroller.k8s.io", "foos"),
    ),
    // updateFooStatus.
    (
        "samplecontroller.k8s.io/foos/status",
        ("update", "samplecontroller.k8s.io", "foos/status"),
    ),
    // The Deployment informer's initial list.
    ("apps/deployments", ("list", "apps", "deployments")),
    // The Synced event.
    ("/events", ("create", "", "events")),
    // Taking a lease that does not exist yet.
    (
        "coordination.k8s.io/leases",
        ("create", "coordination.k8s.io", "leases"),
    ),
    // Reading the lease before taking it.
    (
        "coordination.k8s.io/leases[sample-controller]",
        ("get", "coordination.k8s.io", "leases"),
    ),
];

/// The simulator in RBAC mode with the CRD, and the manifests' ServiceAccount, ClusterRole
/// and ClusterRoleBinding applied; returns the server, an admin client and the role.
async fn cluster() -> (ApiServer, Client, ClusterRole) {
    let server = ApiServer::builder().rbac(true).start().await.unwrap();
    let admin = server.client().unwrap();
    install_crd(&admin, &crd()).await.unwrap();
    let account: ServiceAccount = manifest("service-account.yaml");
    Api::<ServiceAccount>::namespaced(admin.clone(), NAMESPACE)
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    let role: ClusterRole = manifest("cluster-role.yaml");
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &role)
        .await
        .unwrap();
    let binding: ClusterRoleBinding = manifest("cluster-role-binding.yaml");
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    (server, admin, role)
}

/// Stores `rules` as the ClusterRole's rules.
async fn set_rules(admin: &Client, rules: Vec<PolicyRule>) {
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let mut role = roles.get("sample-controller").await.unwrap();
    role.rules = Some(rules);
    roles
        .replace("sample-controller", &PostParams::default(), &role)
        .await
        .unwrap();
}

/// A manager running the sample-controller as its ServiceAccount, as the manifests deploy it
/// (all namespaces, `--leader-elect`); stopped with the returned token.
fn start_controller(
    server: &ApiServer,
) -> (
    CancellationToken,
    tokio::task::JoinHandle<Result<(), controller_runtime::Error>>,
) {
    let client = server
        .service_account_client(NAMESPACE, "sample-controller")
        .unwrap();
    let stop = CancellationToken::new();
    let manager: Manager = sample::manager_builder(client, &Settings::leader_elected(NAMESPACE))
        .handle_signals(false)
        .shutdown_token(stop.clone())
        .build();
    sample::register(&manager).unwrap();
    (stop, tokio::spawn(async move { manager.start().await }))
}

async fn create_foo(admin: &Client, name: &str) {
    Api::<Foo>::namespaced(admin.clone(), NAMESPACE)
        .create(
            &PostParams::default(),
            &new_foo(name, &format!("{name}-nginx"), Some(1)),
        )
        .await
        .unwrap();
}

fn named<K: ResourceExt>(objects: Vec<K>, name: &str) -> Option<K> {
    objects.into_iter().find(|o| o.name_any() == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_role_is_enough_and_every_rule_is_needed() {
    let (server, admin, role) = cluster().await;
    let rules = role.rules.clone().unwrap();
    let mut ids: Vec<String> = rules.iter().map(rule_id).collect();
    ids.sort();
    let mut covered: Vec<String> = NEEDED_FOR.iter().map(|(id, _)| (*id).to_owned()).collect();
    covered.sort();
    assert_eq!(
        ids, covered,
        "every rule of the role needs a case naming what it is for"
    );

    // With the whole role: everything works and nothing is refused.
    let (stop, running) = start_controller(&server);
    create_foo(&admin, "full").await;
    testkit::eventually("Deployment, status, event and lease", DEADLINE, || {
        let deployment = named(server.list::<Deployment>(), "full-nginx").is_some();
        let status = named(server.list::<Foo>(), "full").is_some_and(|f| f.status.is_some());
        let event = server.list::<Event>().iter().any(|e| {
            e.reason.as_deref() == Some("Synced")
                && e.involved_object.name.as_deref() == Some("full")
        });
        let lease = named(server.list::<Lease>(), LEASE_NAME)
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
            .is_some_and(|holder| !holder.is_empty());
        deployment && status && event && lease
    })
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
    assert_eq!(
        server.denials(),
        Vec::<Denial>::new(),
        "the role grants everything needed"
    );

    // Without each rule in turn: the named operation is refused, and only that rule's.
    for (case, (id, (verb, group, resource))) in NEEDED_FOR.iter().enumerate() {
        let without: Vec<PolicyRule> = rules
            .iter()
            .filter(|r| rule_id(r) != *id)
            .cloned()
            .collect();
        set_rules(&admin, without).await;
        // A fresh lease, so that taking it needs a create.
        let leases: Api<Lease> = Api::namespaced(admin.clone(), NAMESPACE);
        let _ = leases.delete(LEASE_NAME, &DeleteParams::default()).await;
        server.clear_denials();
        let (stop, running) = start_controller(&server);
        let foo = format!("case-{case}");
        create_foo(&admin, &foo).await;
        let what = format!("without {id}: {verb} {group}/{resource} refused");
        testkit::eventually(&what, DEADLINE, || {
            server.denials().iter().any(|d| d.is(verb, group, resource))
        })
        .await;
        stop.cancel();
        let _ = running.await.unwrap();
        for denial in server.denials() {
            assert_eq!(
                (denial.group.as_str(), denial.resource.as_deref()),
                (*group, Some(*resource)),
                "without {id}, only its operations may be refused: {denial:?}"
            );
            assert_eq!(
                denial.user,
                "system:serviceaccount:default:sample-controller"
            );
        }
        set_rules(&admin, rules.clone()).await;
    }
    server.shutdown().await;
}
