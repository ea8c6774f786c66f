//! What a real server serves for a built-in resource that its k8s-openapi type does not
//! carry: short names, categories, verbs, the scale subresource, exceptions to the
//! generation rule, and whether DELETE answers with the object. Taken from the upstream
//! registries (`ShortNames()`, `Categories()`, `ReturnDeletedObject`, each strategy's
//! `PrepareForCreate`); anything not listed gets the defaults of [`Traits::DEFAULT`].

use crate::machinery::resource_info::{ALL_VERBS, GenerationRule};

/// The hand-kept traits of one resource.
#[derive(Debug, Clone, Copy)]
pub struct Traits {
    /// API group.
    pub group: &'static str,
    /// Plural resource name.
    pub plural: &'static str,
    /// Short names (`kubectl get po`).
    pub short: &'static [&'static str],
    /// Categories (`kubectl get all`).
    pub categories: &'static [&'static str],
    /// Verbs served.
    pub verbs: &'static [&'static str],
    /// A scale subresource at `.spec.replicas` / `.status.replicas` / `.spec.selector`.
    pub scale: bool,
    /// The generation rule, when it differs from the default ("has a spec and a status").
    pub generation: Option<GenerationRule>,
    /// DELETE answers with the object instead of a `Status`.
    pub delete_returns_object: bool,
}

impl Traits {
    /// The traits of a resource nobody listed.
    pub const DEFAULT: Traits = Traits {
        group: "",
        plural: "",
        short: &[],
        categories: &[],
        verbs: ALL_VERBS,
        scale: false,
        generation: None,
        delete_returns_object: false,
    };
}

const ALL: &[&str] = &["all"];
const API_EXTENSIONS: &[&str] = &["api-extensions"];
/// Namespaces cannot be deleted as a collection.
const NO_COLLECTION: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

const fn t(group: &'static str, plural: &'static str, short: &'static [&'static str]) -> Traits {
    Traits {
        group,
        plural,
        short,
        ..Traits::DEFAULT
    }
}

const fn all(mut tr: Traits) -> Traits {
    tr.categories = ALL;
    tr
}

const fn ext(mut tr: Traits) -> Traits {
    tr.categories = API_EXTENSIONS;
    tr
}

const fn scaled(mut tr: Traits) -> Traits {
    tr.scale = true;
    tr
}

const fn returns_object(mut tr: Traits) -> Traits {
    tr.delete_returns_object = true;
    tr
}

const fn no_generation(mut tr: Traits) -> Traits {
    tr.generation = Some(GenerationRule::None);
    tr
}

const fn spec_generation(mut tr: Traits) -> Traits {
    tr.generation = Some(GenerationRule::Spec);
    tr
}

/// Webhook configurations have no spec: any change outside metadata is a new generation.
const fn all_but_metadata_generation(mut tr: Traits) -> Traits {
    tr.generation = Some(GenerationRule::AllButMetadata);
    tr
}

const TRAITS: &[Traits] = &[
    t("", "configmaps", &["cm"]),
    t("", "endpoints", &["ep"]),
    t("", "events", &["ev"]),
    t("", "limitranges", &["limits"]),
    {
        let mut ns = no_generation(returns_object(t("", "namespaces", &["ns"])));
        ns.verbs = NO_COLLECTION;
        ns
    },
    no_generation(t("", "nodes", &["no"])),
    no_generation(returns_object(t("", "persistentvolumes", &["pv"]))),
    no_generation(returns_object(t("", "persistentvolumeclaims", &["pvc"]))),
    spec_generation(all(returns_object(t("", "pods", &["po"])))),
    scaled(all(t("", "replicationcontrollers", &["rc"]))),
    no_generation(t("", "resourcequotas", &["quota"])),
    returns_object(t("", "serviceaccounts", &["sa"])),
    no_generation(all(returns_object(t("", "services", &["svc"])))),
    ext(t(
        "admissionregistration.k8s.io",
        "mutatingadmissionpolicies",
        &[],
    )),
    ext(t(
        "admissionregistration.k8s.io",
        "mutatingadmissionpolicybindings",
        &[],
    )),
    all_but_metadata_generation(ext(t(
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        &[],
    ))),
    ext(t(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
        &[],
    )),
    ext(t(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
        &[],
    )),
    all_but_metadata_generation(ext(t(
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        &[],
    ))),
    ext(returns_object(t(
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        &["crd", "crds"],
    ))),
    ext(t("apiregistration.k8s.io", "apiservices", &[])),
    all(t("apps", "daemonsets", &["ds"])),
    scaled(all(t("apps", "deployments", &["deploy"]))),
    scaled(all(t("apps", "replicasets", &["rs"]))),
    scaled(all(t("apps", "statefulsets", &["sts"]))),
    all(t("autoscaling", "horizontalpodautoscalers", &["hpa"])),
    all(t("batch", "cronjobs", &["cj"])),
    all(t("batch", "jobs", &[])),
    no_generation(t(
        "certificates.k8s.io",
        "certificatesigningrequests",
        &["csr"],
    )),
    t("events.k8s.io", "events", &["ev"]),
    t("networking.k8s.io", "ingresses", &["ing"]),
    t("networking.k8s.io", "ipaddresses", &["ip"]),
    spec_generation(t("networking.k8s.io", "networkpolicies", &["netpol"])),
    t("policy", "poddisruptionbudgets", &["pdb"]),
    t("scheduling.k8s.io", "priorityclasses", &["pc"]),
    returns_object(t("storage.k8s.io", "storageclasses", &["sc"])),
    t("storage.k8s.io", "volumeattributesclasses", &["vac"]),
];

/// The traits of a resource (the defaults when it is not listed).
pub fn traits(group: &str, plural: &str) -> Traits {
    TRAITS
        .iter()
        .find(|t| t.group == group && t.plural == plural)
        .copied()
        .unwrap_or(Traits {
            group: "",
            plural: "",
            ..Traits::DEFAULT
        })
}
