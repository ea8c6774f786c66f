//! The cases of the least-privilege test: for each rule of the shipped roles, and for each
//! further verb of a rule, the operation its removal makes the controller fail with 403.

use k8s_openapi::api::rbac::v1::PolicyRule;

/// `group/resource[names]` of a rule, as the cases below name it.
pub fn rule_id(rule: &PolicyRule) -> String {
    let group = rule.api_groups.as_deref().unwrap_or_default().join(",");
    let resource = rule.resources.as_deref().unwrap_or_default().join(",");
    match rule.resource_names.as_deref() {
        Some(names) if !names.is_empty() => format!("{group}/{resource}[{}]", names.join(",")),
        _ => format!("{group}/{resource}"),
    }
}

/// What a case prepares so that the operation it names is the next one the controller needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setup {
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
pub struct Case {
    pub rule: &'static str,
    pub verb: Option<&'static str>,
    pub refused: (&'static str, &'static str, &'static str),
    pub setup: Setup,
    pub why: &'static str,
}

const FOOS: &str = "samplecontroller.k8s.io";
const LEASES: &str = "coordination.k8s.io";

pub const CASES: &[Case] = &[
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
pub fn without(rules: &[PolicyRule], case: &Case) -> Vec<PolicyRule> {
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
