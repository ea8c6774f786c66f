//! The merge rules of the built-in types the simulator serves, as the Kubernetes OpenAPI
//! documents them (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`,
//! `x-kubernetes-patch-merge-key`, `x-kubernetes-map-type`): which lists are maps keyed by
//! some of their items' fields, which are sets, which structs are atomic. Everything not in
//! this table is a struct whose lists are atomic, the OpenAPI default.
//!
//! The table also says which fields a Go object always has (a non-pointer struct such as a
//! Deployment's `spec.template`, a list without `omitempty` such as a pod's `containers`): a
//! real server compares against the zero value of the Go type, so such a field is never
//! "added", and its `managedFields` entry has no `.`.

/// A built-in type, as far as merging and ownership care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum B {
    /// A struct with no special field (its lists are atomic).
    Plain,
    /// A struct or map merged and owned as a whole (`x-kubernetes-map-type: atomic`).
    Atomic,
    /// The root of an object of some kind.
    Root(RootKind),
    /// `ObjectMeta`.
    ObjectMeta,
    /// `PodTemplateSpec`.
    PodTemplateSpec,
    /// `PodSpec`.
    PodSpec,
    /// `Container` (and `EphemeralContainer`).
    Container,
    /// `ContainerPort` / `ServicePort` (key `protocol` defaults to `TCP`).
    Port,
    /// `EnvVar`.
    EnvVar,
    /// `EnvVarSource`.
    EnvVarSource,
    /// `ResourceRequirements`.
    Resources,
    /// `Affinity`.
    Affinity,
    /// `NodeAffinity`.
    NodeAffinity,
    /// `TopologySpreadConstraint`.
    TopologySpread,
    /// The spec of a Deployment, ReplicaSet, StatefulSet, DaemonSet or Job.
    WorkloadSpec,
    /// `ReplicationControllerSpec` (its template is a pointer, its selector a plain map).
    ControllerSpec,
    /// `JobTemplateSpec`.
    JobTemplate,
    /// `CronJobSpec`.
    CronJobSpec,
    /// `ServiceSpec`.
    ServiceSpec,
    /// A status whose `conditions` are keyed by `type`.
    Status,
    /// `PodStatus`.
    PodStatus,
    /// `NodeStatus`.
    NodeStatus,
    /// A list, with its rule.
    List(&'static ListSpec),
    /// A string scalar (checked as upstream types an applied configuration).
    Str,
    /// A `map[string]string` (labels, annotations, a ConfigMap's data).
    StrMap,
}

/// Kinds whose root has fields with their own types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RootKind {
    /// core/v1 Pod.
    Pod,
    /// apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet.
    Workload,
    /// batch/v1 Job (atomic `status.conditions`).
    Job,
    /// batch/v1 CronJob.
    CronJob,
    /// core/v1 ReplicationController.
    ReplicationController,
    /// core/v1 PodTemplate.
    PodTemplate,
    /// core/v1 Service.
    Service,
    /// core/v1 ServiceAccount.
    ServiceAccount,
    /// core/v1 Node.
    Node,
    /// core/v1 ConfigMap (string maps `data`, `binaryData`).
    ConfigMap,
    /// core/v1 Secret (string maps `data`, `stringData`).
    Secret,
    /// Any other kind.
    Other,
}

/// How a built-in list merges.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ListSpec {
    /// `None`: a set of scalars; `Some(keys)`: a map keyed by these item fields.
    pub keys: Option<&'static [&'static str]>,
    /// The items' type.
    pub item: B,
}

const fn keyed(keys: &'static [&'static str], item: B) -> ListSpec {
    ListSpec {
        keys: Some(keys),
        item,
    }
}

static SET: ListSpec = ListSpec {
    keys: None,
    item: B::Plain,
};
static BY_NAME: ListSpec = keyed(&["name"], B::Plain);
static BY_NAME_ATOMIC: ListSpec = keyed(&["name"], B::Atomic);
static BY_UID: ListSpec = keyed(&["uid"], B::Plain);
static BY_TYPE: ListSpec = keyed(&["type"], B::Plain);
static BY_IP: ListSpec = keyed(&["ip"], B::Plain);
static CONTAINERS: ListSpec = keyed(&["name"], B::Container);
static ENV: ListSpec = keyed(&["name"], B::EnvVar);
static CONTAINER_PORTS: ListSpec = keyed(&["containerPort", "protocol"], B::Port);
static SERVICE_PORTS: ListSpec = keyed(&["port", "protocol"], B::Port);
static MOUNTS: ListSpec = keyed(&["mountPath"], B::Plain);
static DEVICES: ListSpec = keyed(&["devicePath"], B::Plain);
static SPREAD: ListSpec = keyed(&["topologyKey", "whenUnsatisfiable"], B::TopologySpread);

/// The root type of a built-in kind.
pub(crate) fn root(group: &str, kind: &str) -> B {
    B::Root(match (group, kind) {
        ("", "Pod") => RootKind::Pod,
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => RootKind::Workload,
        ("batch", "Job") => RootKind::Job,
        ("batch", "CronJob") => RootKind::CronJob,
        ("", "ReplicationController") => RootKind::ReplicationController,
        ("", "PodTemplate") => RootKind::PodTemplate,
        ("", "Service") => RootKind::Service,
        ("", "ServiceAccount") => RootKind::ServiceAccount,
        ("", "Node") => RootKind::Node,
        ("", "ConfigMap") => RootKind::ConfigMap,
        ("", "Secret") => RootKind::Secret,
        _ => RootKind::Other,
    })
}

/// What a field of a built-in type is: its type, and whether the Go object always has it.
pub(crate) struct BuiltinField {
    /// The field's type; `None` for `metadata.managedFields` (never compared nor owned).
    pub ty: Option<B>,
    /// Whether a Go object of the parent type always has this field (a non-pointer struct, a
    /// list without `omitempty`).
    pub present: bool,
}

fn plain(ty: B) -> BuiltinField {
    BuiltinField {
        ty: Some(ty),
        present: false,
    }
}

fn always(ty: B) -> BuiltinField {
    BuiltinField {
        ty: Some(ty),
        present: true,
    }
}

fn list(spec: &'static ListSpec) -> BuiltinField {
    plain(B::List(spec))
}

fn root_field(kind: RootKind, name: &str) -> BuiltinField {
    match (kind, name) {
        (_, "metadata") => always(B::ObjectMeta),
        (RootKind::Pod, "spec") => always(B::PodSpec),
        (RootKind::Pod, "status") => always(B::PodStatus),
        (RootKind::Workload | RootKind::Job, "spec") => always(B::WorkloadSpec),
        (RootKind::ReplicationController, "spec") => always(B::ControllerSpec),
        (RootKind::CronJob, "spec") => always(B::CronJobSpec),
        (RootKind::Service, "spec") => always(B::ServiceSpec),
        (RootKind::PodTemplate, "template") => always(B::PodTemplateSpec),
        (RootKind::ServiceAccount, "secrets") => list(&BY_NAME),
        (RootKind::Job, "status") => always(B::Plain),
        (RootKind::Node, "status") => always(B::NodeStatus),
        (RootKind::ConfigMap, "data" | "binaryData")
        | (RootKind::Secret, "data" | "stringData") => plain(B::StrMap),
        (_, "status") => always(B::Status),
        (_, "spec") => always(B::Plain),
        _ => plain(B::Plain),
    }
}

/// The type of field `name` of a value of type `parent`.
pub(crate) fn field(parent: B, name: &str) -> BuiltinField {
    match (parent, name) {
        (B::Root(kind), _) => root_field(kind, name),
        (B::ObjectMeta, "managedFields") => BuiltinField {
            ty: None,
            present: false,
        },
        (B::ObjectMeta, "finalizers") => list(&SET),
        (
            B::ObjectMeta,
            "name" | "namespace" | "generateName" | "uid" | "resourceVersion" | "selfLink",
        ) => plain(B::Str),
        (B::ObjectMeta, "labels" | "annotations") | (B::PodSpec, "nodeSelector") => {
            plain(B::StrMap)
        }
        (B::StrMap, _) => plain(B::Str),
        (B::ObjectMeta, "ownerReferences") => list(&BY_UID),
        (B::PodTemplateSpec | B::JobTemplate, "metadata") => always(B::ObjectMeta),
        (B::PodTemplateSpec, "spec") => always(B::PodSpec),
        (B::JobTemplate, "spec") => always(B::WorkloadSpec),
        // The only list a Go PodSpec always has (`containers` has no `omitempty`).
        (B::PodSpec, "containers") => always(B::List(&CONTAINERS)),
        (B::PodSpec, "initContainers" | "ephemeralContainers") => list(&CONTAINERS),
        (B::PodSpec, "volumes" | "resourceClaims" | "schedulingGates") => list(&BY_NAME),
        (B::PodSpec, "imagePullSecrets") => list(&BY_NAME_ATOMIC),
        (B::PodSpec, "hostAliases") => list(&BY_IP),
        (B::PodSpec, "topologySpreadConstraints") => list(&SPREAD),
        (B::PodSpec, "affinity") => plain(B::Affinity),
        (B::Container, "env") => list(&ENV),
        (B::Container, "ports") => list(&CONTAINER_PORTS),
        (B::Container, "volumeMounts") => list(&MOUNTS),
        (B::Container, "volumeDevices") => list(&DEVICES),
        (B::Container, "resources") => always(B::Resources),
        (B::Resources, "claims") => list(&BY_NAME),
        (B::EnvVar, "valueFrom") => plain(B::EnvVarSource),
        (B::EnvVarSource, "configMapKeyRef" | "secretKeyRef" | "fieldRef" | "resourceFieldRef") => {
            plain(B::Atomic)
        }
        (B::Affinity, "nodeAffinity") => plain(B::NodeAffinity),
        (B::NodeAffinity, "requiredDuringSchedulingIgnoredDuringExecution") => plain(B::Atomic),
        (B::TopologySpread, "labelSelector") => plain(B::Atomic),
        (B::WorkloadSpec, "selector") => plain(B::Atomic),
        (B::WorkloadSpec, "template") => always(B::PodTemplateSpec),
        (B::WorkloadSpec, "strategy" | "updateStrategy") => always(B::Plain),
        (B::ControllerSpec, "template") => plain(B::PodTemplateSpec),
        (B::CronJobSpec, "jobTemplate") => always(B::JobTemplate),
        (B::ServiceSpec, "ports") => list(&SERVICE_PORTS),
        (B::Status | B::PodStatus | B::NodeStatus, "conditions") => list(&BY_TYPE),
        (B::PodStatus, "podIPs" | "hostIPs") => list(&BY_IP),
        (B::NodeStatus, "addresses") => list(&BY_TYPE),
        _ => plain(B::Plain),
    }
}

/// The default of a key field of a list item type, used when an item omits it.
pub(crate) fn key_default(item: B, key: &str) -> Option<serde_json::Value> {
    (item == B::Port && key == "protocol").then(|| serde_json::Value::from("TCP"))
}
