//! The shipped RBAC manifests are enough and nothing more: the sample-controller runs as its
//! ServiceAccount with `rbac.yaml`'s ClusterRole and Lease Role bound by
//! `cluster-role-binding.yaml` and `role-binding.yaml`, and reconciles a Foo (Deployment
//! created, status updated, event recorded, lease held) without one refusal — on the simulator
//! (RBAC on, owner-reference permissions enforced as hardened clusters do) or on an existing
//! cluster's own authorizer; then, on the simulator, whose record of refusals says which
//! operation was refused, for each rule of the roles the roles without that rule make a named
//! operation fail with 403 Forbidden, and so do the roles without any one further verb of a
//! rule. One server serves every case; each case runs a fresh manager on a fresh Foo and stops
//! it once the refusal came.

mod cases;
mod setup;

use apiserver_sim::Denial;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::Event;
use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule, Role};
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Api, Client, ResourceExt};
use testenv::DEFAULT_TIMEOUT as DEADLINE;

use crate::sample_controller::foo::{Foo, new_foo};
use crate::sample_controller::operator::LEASE_NAME;
use cases::{CASES, Setup, rule_id, without};
use setup::{NAME, controller_client, setup, start_controller};

/// Stores `rules` as the roles' rules: the Lease rules in the Lease Role (in `ns`), the others
/// in the ClusterRole, where the manifests have them.
async fn set_rules(admin: &Client, ns: &str, rules: Vec<PolicyRule>) {
    let (lease_rules, cluster_rules): (Vec<_>, Vec<_>) = rules.into_iter().partition(|rule| {
        rule.resources
            .as_deref()
            .is_some_and(|resources| resources.iter().any(|r| r == "leases"))
    });
    let cluster_roles: Api<ClusterRole> = Api::all(admin.clone());
    let mut cluster_role = cluster_roles.get(NAME).await.unwrap();
    cluster_role.rules = Some(cluster_rules);
    cluster_roles
        .replace(NAME, &PostParams::default(), &cluster_role)
        .await
        .unwrap();
    let roles: Api<Role> = Api::namespaced(admin.clone(), ns);
    let mut role = roles.get(NAME).await.unwrap();
    role.rules = Some(lease_rules);
    roles
        .replace(NAME, &PostParams::default(), &role)
        .await
        .unwrap();
}

async fn create_foo(admin: &Client, ns: &str, name: &str) {
    Api::<Foo>::namespaced(admin.clone(), ns)
        .create(
            &PostParams::default(),
            &new_foo(name, &format!("{name}-nginx"), Some(1)),
        )
        .await
        .unwrap();
}

/// Every `K` of `ns`, read by `admin`.
async fn list<K>(admin: &Client, ns: &str) -> Vec<K>
where
    K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::namespaced(admin.clone(), ns);
    api.list(&ListParams::default()).await.unwrap().items
}

fn named<K: ResourceExt>(objects: Vec<K>, name: &str) -> Option<K> {
    objects.into_iter().find(|o| o.name_any() == name)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_generated_role_is_enough_and_every_rule_is_needed() {
    let setup::Setup { env, admin, rules } = setup().await;
    let ns = env.namespace().to_owned();
    let controller = controller_client(&env).await;
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

    // With the whole role: everything works (and on the simulator nothing is refused).
    let (stop, running) = start_controller(&env, controller.clone());
    create_foo(&admin, &ns, "full").await;
    testkit::eventually_async("Deployment, status, event and lease", DEADLINE, || async {
        let deployment = named(list::<Deployment>(&admin, &ns).await, "full-nginx").is_some();
        let status =
            named(list::<Foo>(&admin, &ns).await, "full").is_some_and(|f| f.status.is_some());
        let event = list::<Event>(&admin, &ns).await.iter().any(|e| {
            e.reason.as_deref() == Some("Synced")
                && e.involved_object.name.as_deref() == Some("full")
        });
        let lease = named(list::<Lease>(&admin, &ns).await, LEASE_NAME)
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
            .is_some_and(|holder| !holder.is_empty());
        deployment && status && event && lease
    })
    .await;
    stop.cancel();
    running.await.unwrap().unwrap();
    let Some(server) =
        env.simulator_or_skip("record of refusals (the rest: each rule removed in turn)")
    else {
        env.stop().await.unwrap();
        return;
    };
    assert_eq!(
        server.denials(),
        Vec::<Denial>::new(),
        "the role grants everything needed"
    );

    // Without each rule (then each further verb) in turn: the named operation is refused,
    // and nothing but that rule's resource.
    let leases: Api<Lease> = Api::namespaced(admin.clone(), &ns);
    let foos: Api<Foo> = Api::namespaced(admin.clone(), &ns);
    for (n, case) in CASES.iter().enumerate() {
        let (verb, group, resource) = case.refused;
        set_rules(&admin, &ns, without(&rules, case)).await;
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
        let (stop, running) = start_controller(&env, controller.clone());
        let foo = format!("case-{n}");
        create_foo(&admin, &ns, &foo).await;
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
            assert_eq!(denial.user, format!("system:serviceaccount:{ns}:{NAME}"));
        }
    }
    env.stop().await.unwrap();
}
