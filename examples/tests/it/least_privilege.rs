//! The shipped RBAC manifests are enough and nothing more: the sample-controller runs as its
//! ServiceAccount (a token from the simulator, RBAC on, owner-reference permissions enforced
//! as hardened clusters do) with `rbac.yaml`'s ClusterRole and
//! Lease Role bound by `cluster-role-binding.yaml` and `role-binding.yaml`, and reconciles a
//! Foo (Deployment created, status updated, event recorded, lease held) without one refusal;
//! then, for each rule of the roles, the roles without that rule make a named operation fail
//! with 403 Forbidden, and so do the roles without any one further verb of a rule. One server
//! serves every case; each case runs a fresh manager on a fresh Foo and stops it once the
//! refusal came.

use apiserver_sim::{ApiServer, Denial};
use controller_runtime::manager::{self, Manager};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Event, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use testenv::{DEFAULT_TIMEOUT as DEADLINE, TestEnv};
use tokio_util::sync::CancellationToken;

use crate::manifests::rbac_manifest;
use crate::sample_controller::controller::register;
use crate::sample_controller::foo::{Foo, crd, new_foo};
use crate::sample_controller::operator::{LEASE_NAME, Settings, manager_builder};

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

/// What a case prepares so that the operation it names is the next one the controller needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setup {
    /// Nothing beyond a new Foo (and no Lease, so taking it needs a create).
    NewFoo,
    /// The Foo `full` asks for 2 replicas: its Deployment must be updated.
    ScaleFull,
    /// Once the new Foo's Synced event exists, the Foo changes: the same event again is a patch.
    RepeatEvent,
    /// The Lease exists (released): taking it is a get and an update.
    ExistingLease,
}

/// One case: remove the rule `rule` (or only its verb `verb`) and see `refused` (verb, group,
/// resource) fail with 403.
struct Case {
    rule: &'static str,
    verb: Option<&'static str>,
    refused: (&'static str, &'static str, &'static str),
    setup: Setup,
    why: &'static str,
}

const FOOS: &str = "samplecontroller.k8s.io";
const LEASES: &str = "coordination.k8s.io";

const CASES: &[Case] = &[
    // Each rule, whole.
    Case {
        rule: "samplecontroller.k8s.io/foos",
        verb: None,
        refused: ("list", FOOS, "foos"),
        setup: Setup::NewFoo,
        why: "the Foo informer's initial list",
    },
    Case {
        rule: "samplecontroller.k8s.io/foos/status",
        verb: None,
        refused: ("update", FOOS, "foos/status"),
        setup: Setup::NewFoo,
        why: "the status update after a sync",
    },
    Case {
        rule: "samplecontroller.k8s.io/foos/finalizers",
        verb: None,
        refused: ("update", FOOS, "foos/finalizers"),
        setup: Setup::NewFoo,
        why: "a new Foo's Deployment, whose owner reference blocks the Foo's deletion",
    },
    Case {
        rule: "apps/deployments",
        verb: None,
        refused: ("list", "apps", "deployments"),
        setup: Setup::NewFoo,
        why: "the Deployment informer's initial list",
    },
    Case {
        rule: "/events",
        verb: None,
        refused: ("create", "", "events"),
        setup: Setup::NewFoo,
        why: "the Synced event",
    },
    Case {
        rule: "coordination.k8s.io/leases",
        verb: None,
        refused: ("create", LEASES, "leases"),
        setup: Setup::NewFoo,
        why: "taking a Lease that does not exist yet",
    },
    Case {
        rule: "coordination.k8s.io/leases[sample-controller]",
        verb: None,
        refused: ("get", LEASES, "leases"),
        setup: Setup::NewFoo,
        why: "reading the Lease before taking it",
    },
    // The other verbs of the rules with several.
    Case {
        rule: "samplecontroller.k8s.io/foos",
        verb: Some("watch"),
        refused: ("watch", FOOS, "foos"),
        setup: Setup::NewFoo,
        why: "the Foo informer's watch after its list",
    },
    Case {
        rule: "apps/deployments",
        verb: Some("watch"),
        refused: ("watch", "apps", "deployments"),
        setup: Setup::NewFoo,
        why: "the Deployment informer's watch after its list",
    },
    Case {
        rule: "apps/deployments",
        verb: Some("create"),
        refused: ("create", "apps", "deployments"),
        setup: Setup::NewFoo,
        why: "a new Foo's Deployment",
    },
    Case {
        rule: "apps/deployments",
        verb: Some("update"),
        refused: ("update", "apps", "deployments"),
        setup: Setup::ScaleFull,
        why: "scaling a Foo's Deployment to its replicas",
    },
    Case {
        rule: "/events",
        verb: Some("patch"),
        refused: ("patch", "", "events"),
        setup: Setup::RepeatEvent,
        why: "counting a repeated event",
    },
    Case {
        rule: "coordination.k8s.io/leases[sample-controller]",
        verb: Some("update"),
        refused: ("update", LEASES, "leases"),
        setup: Setup::ExistingLease,
        why: "taking an existing Lease",
    },
];

/// `rules` without `case`'s rule, or without only its verb.
fn without(rules: &[PolicyRule], case: &Case) -> Vec<PolicyRule> {
    rules
        .iter()
        .filter(|r| case.verb.is_some() || rule_id(r) != case.rule)
        .cloned()
        .map(|mut r| {
            if let Some(verb) = case.verb.filter(|_| rule_id(&r) == case.rule) {
                r.verbs.retain(|v| v != verb);
            }
            r
        })
        .collect()
}

/// The test environment's simulator in RBAC mode with the CRD, and the manifests'
/// ServiceAccount, roles and bindings applied; returns the environment, an admin client and
/// the rules of both roles (the ClusterRole's, then the Lease Role's). `None` on an existing
/// cluster: the test reads the simulator's record of RBAC denials.
async fn cluster() -> Option<(TestEnv, Client, Vec<PolicyRule>)> {
    let env = TestEnv::builder()
        .server(|server| {
            server
                .rbac(true)
                .owner_references_permission_enforcement(true)
        })
        .require_simulator("RBAC mode and its record of denials")
        .crd(crd())
        .start_or_skip()
        .await
        .unwrap()?;
    let admin = env.client();
    let account: ServiceAccount = manifest("service-account.yaml");
    Api::<ServiceAccount>::namespaced(admin.clone(), NAMESPACE)
        .create(&PostParams::default(), &account)
        .await
        .unwrap();
    let (cluster_role, lease_role) = rbac_manifest();
    let mut rules = cluster_role.rules.clone().unwrap_or_default();
    rules.extend(lease_role.rules.clone().unwrap_or_default());
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &cluster_role)
        .await
        .unwrap();
    Api::<Role>::namespaced(admin.clone(), NAMESPACE)
        .create(&PostParams::default(), &lease_role)
        .await
        .unwrap();
    let binding: ClusterRoleBinding = manifest("cluster-role-binding.yaml");
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
    let lease_binding: RoleBinding = manifest("role-binding.yaml");
    Api::<RoleBinding>::namespaced(admin.clone(), NAMESPACE)
        .create(&PostParams::default(), &lease_binding)
        .await
        .unwrap();
    Some((env, admin, rules))
}

/// Stores `rules` as the roles' rules: the Lease rules in the Lease Role, the others in the
/// ClusterRole, where the manifests have them.
async fn set_rules(admin: &Client, rules: Vec<PolicyRule>) {
    let (lease_rules, cluster_rules): (Vec<_>, Vec<_>) = rules.into_iter().partition(|rule| {
        rule.resources
            .as_deref()
            .is_some_and(|resources| resources.iter().any(|r| r == "leases"))
    });
    let cluster_roles: Api<ClusterRole> = Api::all(admin.clone());
    let mut cluster_role = cluster_roles.get("sample-controller").await.unwrap();
    cluster_role.rules = Some(cluster_rules);
    cluster_roles
        .replace("sample-controller", &PostParams::default(), &cluster_role)
        .await
        .unwrap();
    let roles: Api<Role> = Api::namespaced(admin.clone(), NAMESPACE);
    let mut role = roles.get("sample-controller").await.unwrap();
    role.rules = Some(lease_rules);
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
    tokio::task::JoinHandle<Result<(), manager::Error>>,
) {
    let client = server
        .service_account_client(NAMESPACE, "sample-controller")
        .unwrap();
    let stop = CancellationToken::new();
    let manager: Manager = manager_builder(client, &Settings::leader_elected(NAMESPACE))
        .handle_signals(false)
        .shutdown_token(stop.clone())
        .build();
    register(&manager).unwrap();
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
    let Some((env, admin, rules)) = cluster().await else {
        return;
    };
    let server = env.simulator().expect("the test runs on the simulator");
    // Every verb of every rule has a case: whole-rule cases name the rule's first verb used.
    let mut granted: Vec<String> = rules
        .iter()
        .flat_map(|r| r.verbs.iter().map(move |v| format!("{} {v}", rule_id(r))))
        .collect();
    granted.sort();
    let mut covered: Vec<String> = CASES
        .iter()
        .map(|c| format!("{} {}", c.rule, c.verb.unwrap_or(c.refused.0)))
        .collect();
    covered.sort();
    assert_eq!(
        granted, covered,
        "every verb of every rule needs a case naming what it is for"
    );
    let mut whole: Vec<String> = rules.iter().map(rule_id).collect();
    whole.sort();
    let mut whole_cases: Vec<String> = CASES
        .iter()
        .filter(|c| c.verb.is_none())
        .map(|c| c.rule.to_owned())
        .collect();
    whole_cases.sort();
    assert_eq!(
        whole, whole_cases,
        "every rule needs a case removing it whole"
    );

    // With the whole role: everything works and nothing is refused.
    let (stop, running) = start_controller(server);
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

    // Without each rule (then each further verb) in turn: the named operation is refused,
    // and nothing but that rule's resource.
    let leases: Api<Lease> = Api::namespaced(admin.clone(), NAMESPACE);
    let foos: Api<Foo> = Api::namespaced(admin.clone(), NAMESPACE);
    for (n, case) in CASES.iter().enumerate() {
        let (verb, group, resource) = case.refused;
        set_rules(&admin, without(&rules, case)).await;
        match case.setup {
            Setup::ExistingLease => assert!(
                leases.get_opt(LEASE_NAME).await.unwrap().is_some(),
                "the previous case left the released Lease"
            ),
            _ => {
                let _ = leases.delete(LEASE_NAME, &DeleteParams::default()).await;
            }
        }
        if case.setup == Setup::ScaleFull {
            let patch = serde_json::json!({"spec": {"replicas": 2}});
            foos.patch("full", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
        }
        server.clear_denials();
        let (stop, running) = start_controller(server);
        let foo = format!("case-{n}");
        create_foo(&admin, &foo).await;
        if case.setup == Setup::RepeatEvent {
            testkit::eventually("the first Synced event", DEADLINE, || {
                server.list::<Event>().iter().any(|e| {
                    e.reason.as_deref() == Some("Synced")
                        && e.involved_object.name.as_deref() == Some(foo.as_str())
                })
            })
            .await;
            let patch = serde_json::json!({"metadata": {"labels": {"synced": "again"}}});
            foos.patch(&foo, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
        }
        let removed = match case.verb {
            Some(v) => format!("{v} of {}", case.rule),
            None => case.rule.to_owned(),
        };
        let what = format!(
            "without {removed}: {verb} {group}/{resource} ({}) refused",
            case.why
        );
        testkit::eventually(&what, DEADLINE, || {
            server.denials().iter().any(|d| d.is(verb, group, resource))
        })
        .await;
        stop.cancel();
        let _ = running.await.unwrap();
        for denial in server.denials() {
            assert_eq!(
                (denial.group.as_str(), denial.resource.as_deref()),
                (group, Some(resource)),
                "without {removed}, only its operations may be refused: {denial:?}"
            );
            assert_eq!(
                denial.user,
                "system:serviceaccount:default:sample-controller"
            );
        }
    }
    env.stop().await.unwrap();
}
