//! The RBAC roles a manager generates: list and watch per cached type, the event recorder,
//! leader election and declared writes, placed in a ClusterRole or a namespace's Role — and,
//! against the simulator in RBAC mode, enough for a controller running as a ServiceAccount
//! bound to them, with a refused write once a declared rule is left out.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::rbac::{Rule, Verb};
use controller_runtime::{
    cache::Metadata,
    controller::{Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn},
    events::{EventRecord, EventType, reference_to},
    leader_election::LeaderElectionConfig,
    manager::Manager,
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Node, Secret, ServiceAccount};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{Api, PostParams};
use serde_json::json;

fn shown(manager: &Manager) -> Vec<String> {
    manager
        .permissions()
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// A controller of ConfigMaps that owns Secrets, writes one Secret per ConfigMap and reports
/// an event; it declares the Secret writes.
fn register(manager: &Manager, declared: Vec<Rule>) {
    Controller::new(manager)
        .for_(Watch::of::<ConfigMap>())
        .owns(Watch::of::<Secret>())
        .named("cm-to-secret")
        .permissions(declared)
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| async move {
                let Some(cm) = ctx.get() else {
                    return Ok(Action::done());
                };
                let ns = req.key.namespace().unwrap_or_default().to_owned();
                let secrets: Api<Secret> = Api::namespaced(ctx.client().clone(), &ns);
                let secret: Secret =
                    serde_json::from_value(json!({"metadata": {"name": req.key.name()}}))
                        .map_err(ReconcileError::new)?;
                match secrets.create(&PostParams::default(), &secret).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(s)) if s.code == 409 => {}
                    Err(e) => return Err(ReconcileError::new(e)),
                }
                ctx.recorder().publish(
                    reference_to(cm.as_ref()),
                    EventRecord {
                        type_: EventType::Normal,
                        reason: "Mirrored".into(),
                        action: "Create".into(),
                        note: None,
                    },
                );
                Ok::<_, ReconcileError>(Action::done())
            },
        ))
        .unwrap();
}

fn secret_writes() -> Vec<Rule> {
    vec![Rule::of::<Secret>().verbs([Verb::Create])]
}

#[tokio::test]
async fn the_policy_holds_informers_recorder_leases_and_declared_writes() {
    let server = TestCluster::start().await.unwrap();
    // A manager of every namespace, even on a shared cluster: it is never started.
    let manager = Manager::builder(server.test_client().unwrap())
        .handle_signals(false)
        .leader_election(LeaderElectionConfig::new("ops", "cm-to-secret"))
        .build();
    register(&manager, secret_writes());
    assert_eq!(
        shown(&manager),
        [
            "core/configmaps: list,watch",
            // Owning Secrets: setting blockOwnerDeletion on them needs this where the
            // OwnerReferencesPermissionEnforcement admission plugin runs.
            "core/configmaps/finalizers: update",
            "core/secrets: list,watch,create",
            "coordination.k8s.io/leases in ops: create",
            "coordination.k8s.io/leases [cm-to-secret] in ops: get,update",
            "events.k8s.io/events: create,patch",
        ]
    );
    let policy = manager.rbac_policy("cm-to-secret");
    let role = policy.cluster_role.clone().unwrap();
    assert_eq!(role.metadata.name.as_deref(), Some("cm-to-secret"));
    assert_eq!(
        role.rules.unwrap().len(),
        4,
        "everything but the Lease rules"
    );
    // The Lease rules in a Role of the Lease's namespace: no Lease elsewhere can be touched.
    assert_eq!(policy.roles.len(), 1);
    let lease_role = &policy.roles[0];
    assert_eq!(lease_role.metadata.namespace.as_deref(), Some("ops"));
    let lease_rules: Vec<_> = lease_role.rules.iter().flatten().collect();
    assert_eq!(lease_rules.len(), 2);
    assert!(
        lease_rules
            .iter()
            .all(|r| r.resources.as_deref() == Some(&["leases".to_owned()][..]))
    );
    // Declaring a rule on the manager, or caching one more type, extends the policy.
    manager
        .require(Rule::of::<Node>().verbs([Verb::Get]))
        .unwrap();
    manager.cache().informers::<Node>().unwrap();
    assert!(shown(&manager).contains(&"core/nodes: get,list,watch".to_owned()));
    assert!(
        manager.require(Rule::of::<Node>()).is_err(),
        "a rule without verbs"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn a_namespaced_manager_gets_a_role_in_its_namespace() {
    let server = TestCluster::start().await.unwrap();
    let manager = manager(&server)
        .namespace("team")
        .leader_election(LeaderElectionConfig::new("team", "op"))
        .build();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .event_recorder(false)
        .build(reconciler_fn(|_: Request, _: Context<ConfigMap>| async {
            Ok::<_, ReconcileError>(Action::done())
        }))
        .unwrap();
    manager.cache().informers::<Node>().unwrap();
    // A metadata-only cache lists and watches like a full one.
    manager
        .cache()
        .informers::<Metadata<k8s_openapi::api::core::v1::Secret>>()
        .unwrap();
    let policy = manager.rbac_policy("op");
    let cluster = policy.cluster_role.clone().unwrap().rules.unwrap();
    assert_eq!(cluster.len(), 1);
    assert_eq!(
        cluster[0].resources.as_deref(),
        Some(&["nodes".to_owned()][..])
    );
    assert_eq!(policy.roles.len(), 1);
    let role = &policy.roles[0];
    assert_eq!(role.metadata.namespace.as_deref(), Some("team"));
    let resources: Vec<String> = role
        .rules
        .iter()
        .flatten()
        .map(|r| r.resources.clone().unwrap().join(","))
        .collect();
    assert_eq!(
        resources,
        ["configmaps", "secrets", "leases", "leases"],
        "secrets from the metadata cache; no events: the recorder is off"
    );
    let yaml = policy.to_yaml().unwrap();
    assert!(
        yaml.contains("kind: Role\nmetadata:\n  name: op\n  namespace: team\n"),
        "{yaml}"
    );
    server.shutdown().await;
}

/// Runs a manager as the ServiceAccount `default/operator`, bound to `role`, until it
/// reconciled `cm` or the server refused something; returns the refusals.
async fn run_as_operator(
    server: &apiserver_sim::ApiServer,
    role: ClusterRole,
    declared: Vec<Rule>,
    name: &str,
) -> Vec<apiserver_sim::Denial> {
    let admin = server.client().unwrap();
    let roles: Api<ClusterRole> = Api::all(admin.clone());
    let _ = roles.delete("cm-to-secret", &Default::default()).await;
    roles.create(&PostParams::default(), &role).await.unwrap();
    server.clear_denials();
    let client = server
        .service_account_client("default", "operator")
        .unwrap();
    let manager = Arc::new(
        Manager::builder(client)
            .handle_signals(false)
            .leader_election(
                LeaderElectionConfig::new("default", "cm-to-secret").release_on_cancel(true),
            )
            .build(),
    );
    register(&manager, declared);
    let running = spawn(&manager);
    server.create(&cm(name, "1")).unwrap();
    eventually(
        "the reconcile or a refusal",
        Duration::from_secs(20),
        || {
            !server.denials().is_empty()
                || server
                    .list::<Event>()
                    .iter()
                    .any(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(name))
        },
    )
    .await;
    manager.shutdown_handle().shutdown();
    let _ = running.await;
    server.denials()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_role_is_enough_and_each_declared_rule_is_needed() {
    if testkit::cluster::sim_only("RBAC mode and its record of denials") {
        return;
    }
    let server = apiserver_sim::ApiServer::builder()
        .rbac(true)
        .start()
        .await
        .unwrap();
    let admin = server.client().unwrap();
    let sa: ServiceAccount =
        serde_json::from_value(json!({"metadata": {"name": "operator"}})).unwrap();
    Api::<ServiceAccount>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &sa)
        .await
        .unwrap();
    let binding: ClusterRoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "cm-to-secret"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-to-secret"},
        "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "default"}],
    }))
    .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    // The roles as the operator's own manager generates them: the ClusterRole (varied below)
    // and the Role with the Lease rules in the Lease's namespace, bound once.
    let policy = {
        let manager = Manager::builder(admin.clone())
            .leader_election(LeaderElectionConfig::new("default", "cm-to-secret"))
            .build();
        register(&manager, secret_writes());
        manager.rbac_policy("cm-to-secret")
    };
    let generated = policy.cluster_role.clone().unwrap();
    let [lease_role] = &policy.roles[..] else {
        panic!("one Role, the Lease's: {:?}", policy.roles);
    };
    Api::<Role>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), lease_role)
        .await
        .unwrap();
    let lease_binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": "cm-to-secret", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-to-secret"},
        "subjects": [{"kind": "ServiceAccount", "name": "operator", "namespace": "default"}],
    }))
    .unwrap();
    Api::<RoleBinding>::namespaced(admin.clone(), "default")
        .create(&PostParams::default(), &lease_binding)
        .await
        .unwrap();
    let denials = run_as_operator(&server, generated.clone(), secret_writes(), "first").await;
    assert_eq!(denials, [], "the generated role grants everything");
    let named = |name: &str, meta: &kube::api::ObjectMeta| meta.name.as_deref() == Some(name);
    assert!(
        server
            .list::<Secret>()
            .iter()
            .any(|s| named("first", &s.metadata))
    );
    let lease = server
        .list::<Lease>()
        .into_iter()
        .find(|l| named("cm-to-secret", &l.metadata))
        .expect("the lease was taken");
    assert!(lease.spec.and_then(|s| s.holder_identity).is_some());
    // Without the declared write, creating the Secret is refused.
    let mut without = generated;
    for rule in without.rules.iter_mut().flatten() {
        if rule.resources.as_deref() == Some(&["secrets".to_owned()][..]) {
            rule.verbs.retain(|verb| verb != "create");
        }
    }
    let denials = run_as_operator(&server, without, Vec::new(), "second").await;
    assert!(
        denials.iter().any(|d| d.is("create", "", "secrets")),
        "{denials:?}"
    );
    server.shutdown().await;
}
