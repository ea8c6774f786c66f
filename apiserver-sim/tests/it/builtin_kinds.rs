//! Every built-in kind of the targeted Kubernetes version is served: CRUD, list and watch
//! through kube's typed clients on a sample of kinds served from their k8s-openapi types
//! (each write recording its `managedFields`, which a replace sends back);
//! the status and scale subresources; discovery with real short names, categories and
//! verbs; objects that do not decode as their type are refused; autoscaling/v1 and v2 are
//! one resource. Sources: the Kubernetes API reference (resource paths, scopes,
//! subresources), `kubectl api-resources` against a cluster (short names, categories,
//! verbs), kube-apiserver's decoding of request bodies into the typed Go structs
//! (`... cannot be handled as a ...`, 400), and kubernetes `pkg/apis/autoscaling/v1`
//! conversion (the CPU target as v2's CPU utilization metric).

use crate::common;

use std::fmt::Debug;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::{apps, autoscaling, batch, core, networking, policy, rbac, storage};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::NamespaceResourceScope;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A typed object from JSON (`apiVersion` and `kind` filled from the type).
fn typed<K: kube::Resource<DynamicType = ()> + DeserializeOwned>(mut v: Value) -> K {
    v["apiVersion"] = json!(K::api_version(&()));
    v["kind"] = json!(K::kind(&()));
    serde_json::from_value(v).expect("valid object")
}

/// Create, get, list, watch a label patch, replace, delete, through one typed API.
async fn crud<K>(api: Api<K>, obj: K)
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + Debug
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static,
{
    let kind = K::kind(&()).to_string();
    let created = api
        .create(&PostParams::default(), &obj)
        .await
        .unwrap_or_else(|e| panic!("create {kind}: {e}"));
    let name = created.meta().name.clone().expect("name");
    let rv = created.meta().resource_version.clone().expect("rv");
    assert!(created.meta().uid.is_some(), "{kind} has a uid");
    // The create is owned by kube's default field manager, in the version written.
    let entries = created.meta().managed_fields.clone().unwrap_or_default();
    assert!(
        entries
            .iter()
            .any(|e| e.operation.as_deref() == Some("Update")
                && e.api_version.as_deref() == Some(&*K::api_version(&()))),
        "{kind} managedFields: {entries:?}"
    );
    let got = api
        .get(&name)
        .await
        .unwrap_or_else(|e| panic!("get {kind}: {e}"));
    assert_eq!(got.meta().resource_version, Some(rv.clone()));
    let list = api
        .list(&ListParams::default())
        .await
        .unwrap_or_else(|e| panic!("list {kind}: {e}"));
    assert!(
        list.items
            .iter()
            .any(|o| o.meta().name.as_deref() == Some(name.as_str())),
        "{kind} listed"
    );
    let mut events = api
        .watch(&WatchParams::default(), &rv)
        .await
        .unwrap_or_else(|e| panic!("watch {kind}: {e}"))
        .boxed();
    api.patch(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
    )
    .await
    .unwrap_or_else(|e| panic!("patch {kind}: {e}"));
    let ev = tokio::time::timeout(std::time::Duration::from_secs(10), events.try_next())
        .await
        .expect("a watch event")
        .expect("watch ok");
    match ev {
        Some(WatchEvent::Modified(o)) => {
            assert_eq!(
                o.meta()
                    .labels
                    .as_ref()
                    .and_then(|l| l.get("touched"))
                    .map(String::as_str),
                Some("yes")
            )
        }
        other => panic!("{kind}: expected MODIFIED, got {other:?}"),
    }
    let mut current = api.get(&name).await.expect("get");
    current.meta_mut().annotations = Some([("replaced".to_string(), "yes".to_string())].into());
    api.replace(&name, &PostParams::default(), &current)
        .await
        .unwrap_or_else(|e| panic!("replace {kind}: {e}"));
    api.delete(&name, &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("delete {kind}: {e}"));
    common::eventually_async(&format!("{kind} deleted"), common::LIMIT, || async {
        api.get_opt(&name)
            .await
            .map(|o| o.is_none())
            .unwrap_or(false)
    })
    .await;
}

fn ns_api<K>(client: &kube::Client) -> Api<K>
where
    K: kube::Resource<DynamicType = (), Scope = NamespaceResourceScope>,
{
    Api::default_namespaced(client.clone())
}

fn pod_template() -> Value {
    json!({"metadata": {"labels": {"app": "a"}}, "spec": {"restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox"}]}})
}

#[tokio::test]
async fn newly_served_kinds_support_crud_list_and_watch() {
    let server = common::server().await;
    let c = server.client().expect("client");
    let sel = json!({"matchLabels": {"app": "a"}});
    crud(
        ns_api::<apps::v1::StatefulSet>(&c),
        typed(json!({"metadata": {"name": "sts"},
        "spec": {"selector": sel, "serviceName": "s", "template": pod_template()}})),
    )
    .await;
    crud(
        ns_api::<apps::v1::DaemonSet>(&c),
        typed(json!({"metadata": {"name": "ds"},
        "spec": {"selector": sel, "template": pod_template()}})),
    )
    .await;
    crud(
        ns_api::<batch::v1::Job>(&c),
        typed(json!({"metadata": {"name": "job"},
        "spec": {"template": pod_template()}})),
    )
    .await;
    crud(ns_api::<batch::v1::CronJob>(&c), typed(json!({"metadata": {"name": "cj"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": pod_template()}}}}))).await;
    crud(ns_api::<core::v1::PersistentVolumeClaim>(&c), typed(json!({"metadata": {"name": "pvc"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}))).await;
    crud(ns_api::<networking::v1::Ingress>(&c), typed(json!({"metadata": {"name": "ing"},
        "spec": {"rules": [{"host": "a.example", "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "s", "port": {"number": 80}}}}]}}]}}))).await;
    crud(
        ns_api::<networking::v1::NetworkPolicy>(&c),
        typed(json!({"metadata": {"name": "np"},
        "spec": {"podSelector": {}, "policyTypes": ["Ingress"]}})),
    )
    .await;
    crud(
        ns_api::<rbac::v1::Role>(&c),
        typed(json!({"metadata": {"name": "r"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]})),
    )
    .await;
    crud(
        ns_api::<rbac::v1::RoleBinding>(&c),
        typed(json!({"metadata": {"name": "rb"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
        "subjects": [{"kind": "User", "name": "alice"}]})),
    )
    .await;
    crud(
        ns_api::<policy::v1::PodDisruptionBudget>(&c),
        typed(json!({"metadata": {"name": "pdb"},
        "spec": {"minAvailable": 1, "selector": sel}})),
    )
    .await;
    crud(
        ns_api::<autoscaling::v2::HorizontalPodAutoscaler>(&c),
        typed(json!({"metadata": {"name": "hpa"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"},
            "maxReplicas": 3}})),
    )
    .await;
    crud(
        Api::<core::v1::Node>::all(c.clone()),
        typed(json!({"metadata": {"name": "node-1"},
        "spec": {"podCIDR": "10.0.0.0/24"}})),
    )
    .await;
    crud(Api::<core::v1::PersistentVolume>::all(c.clone()), typed(json!({"metadata": {"name": "pv"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/tmp"}}}))).await;
    crud(
        Api::<storage::v1::StorageClass>::all(c.clone()),
        typed(json!({"metadata": {"name": "fast"},
        "provisioner": "example.com/fast"})),
    )
    .await;
}

#[tokio::test]
async fn status_and_scale_subresources() {
    let server = common::server().await;
    let c = server.client().expect("client");
    let jobs: Api<batch::v1::Job> = ns_api(&c);
    jobs.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "j"},
        "spec": {"template": pod_template()}, "status": {"active": 9}})),
    )
    .await
    .expect("create");
    // Status sent with the main resource is ignored; the status subresource sets it.
    assert_eq!(
        jobs.get("j")
            .await
            .expect("get")
            .status
            .and_then(|s| s.active),
        None
    );
    jobs.patch_status(
        "j",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"active": 1}})),
    )
    .await
    .expect("patch status");
    assert_eq!(
        jobs.get("j")
            .await
            .expect("get")
            .status
            .and_then(|s| s.active),
        Some(1)
    );
    let nodes: Api<core::v1::Node> = Api::all(c.clone());
    nodes
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "n"}})),
        )
        .await
        .expect("node");
    nodes
        .patch_status(
            "n",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running"}})),
        )
        .await
        .expect("node status");

    let sts: Api<apps::v1::StatefulSet> = ns_api(&c);
    sts.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}}, "serviceName": "web",
            "template": pod_template()}})),
    )
    .await
    .expect("create sts");
    let scale = sts.get_scale("web").await.expect("get scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(1));
    assert_eq!(
        scale.status.and_then(|s| s.selector).as_deref(),
        Some("app=a")
    );
    sts.patch_scale(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 4}})),
    )
    .await
    .expect("patch scale");
    assert_eq!(sts.get("web").await.expect("get").spec.replicas, Some(4));
    assert_eq!(
        server.objects("apps", "statefulsets")[0]["metadata"]["generation"],
        2
    );
}

fn resource<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["resources"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("{name} listed in {list}"))
}

#[tokio::test]
async fn discovery_lists_short_names_categories_and_verbs() {
    let server = common::server().await;
    let apps = common::raw(&server, "GET", "/apis/apps/v1", &[], b"")
        .await
        .json();
    let sts = resource(&apps, "statefulsets");
    assert_eq!(sts["shortNames"], json!(["sts"]));
    assert_eq!(sts["categories"], json!(["all"]));
    resource(&apps, "statefulsets/scale");
    resource(&apps, "statefulsets/status");
    let batch = common::raw(&server, "GET", "/apis/batch/v1", &[], b"")
        .await
        .json();
    assert_eq!(resource(&batch, "cronjobs")["shortNames"], json!(["cj"]));
    assert_eq!(resource(&batch, "jobs")["categories"], json!(["all"]));
    let core = common::raw(&server, "GET", "/api/v1", &[], b"")
        .await
        .json();
    for (name, short) in [
        ("pods", "po"),
        ("nodes", "no"),
        ("persistentvolumeclaims", "pvc"),
        ("replicationcontrollers", "rc"),
    ] {
        assert_eq!(
            resource(&core, name)["shortNames"],
            json!([short]),
            "{name}"
        );
    }
    let ns_verbs = resource(&core, "namespaces")["verbs"].clone();
    assert!(
        !ns_verbs
            .as_array()
            .expect("verbs")
            .contains(&json!("deletecollection"))
    );
    let r = common::raw(&server, "DELETE", "/api/v1/namespaces", &[], b"").await;
    assert_eq!(r.status, 405, "{}", r.body);
    let agg = common::raw(
        &server,
        "GET",
        "/apis",
        &[(
            "Accept",
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
        )],
        b"",
    )
    .await
    .json();
    let netpol = agg["items"]
        .as_array()
        .expect("groups")
        .iter()
        .filter(|g| g["metadata"]["name"] == "networking.k8s.io")
        .flat_map(|g| {
            g["versions"][0]["resources"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|r| r["resource"] == "networkpolicies")
        .expect("networkpolicies in aggregated discovery");
    assert_eq!(netpol["shortNames"], json!(["netpol"]));
    let groups = common::raw(&server, "GET", "/apis", &[], b"").await.json();
    for g in [
        "batch",
        "policy",
        "rbac.authorization.k8s.io",
        "storage.k8s.io",
        "autoscaling",
        "discovery.k8s.io",
    ] {
        assert!(
            groups["groups"]
                .as_array()
                .expect("groups")
                .iter()
                .any(|x| x["name"] == g),
            "{g}"
        );
    }
}

#[tokio::test]
async fn objects_that_do_not_decode_as_their_type_are_refused() {
    let server = common::server().await;
    let body = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "bad"},
        "spec": {"replicas": "three", "selector": {"matchLabels": {"app": "a"}}, "template": pod_template()}});
    let r = common::raw(
        &server,
        "POST",
        "/apis/apps/v1/namespaces/default/statefulsets",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    let status = r.json();
    assert_eq!(status["reason"], "BadRequest");
    let msg = status["message"].as_str().unwrap_or("");
    assert!(
        msg.contains("StatefulSet") && msg.contains("spec.replicas"),
        "{msg}"
    );
    assert!(server.objects("apps", "statefulsets").is_empty());
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}, "spec": {"unschedulable": "yes"}});
    let r = common::raw(
        &server,
        "POST",
        "/api/v1/nodes",
        &[("Content-Type", "application/json")],
        node.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(server.objects("", "nodes").is_empty());
    // An update that breaks the type is refused too, and the object is unchanged.
    let c = server.client().expect("client");
    let cms: Api<core::v1::ConfigMap> = ns_api(&c);
    cms.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "cm"}, "data": {"a": "b"}})),
    )
    .await
    .expect("cm");
    let err = cms
        .patch(
            "cm",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"a": 1}})),
        )
        .await
        .expect_err("refused");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 400),
        "{err:?}"
    );
    assert_eq!(server.objects("", "configmaps")[0]["data"]["a"], "b");
}

#[tokio::test]
async fn autoscaling_v1_and_v2_are_one_resource() {
    let server = common::server().await;
    let c = server.client().expect("client");
    let v2: Api<autoscaling::v2::HorizontalPodAutoscaler> = ns_api(&c);
    let v1: Api<autoscaling::v1::HorizontalPodAutoscaler> = ns_api(&c);
    let target = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"});
    v2.create(&PostParams::default(), &typed(json!({"metadata": {"name": "a"}, "spec": {
        "scaleTargetRef": target, "maxReplicas": 5, "metrics": [{"type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}})))
        .await
        .expect("create v2");
    let as_v1 = v1.get("a").await.expect("get v1");
    assert_eq!(as_v1.spec.target_cpu_utilization_percentage, Some(60));
    v1.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "b"}, "spec": {
        "scaleTargetRef": target, "maxReplicas": 2, "targetCPUUtilizationPercentage": 70}})),
    )
    .await
    .expect("create v1");
    let as_v2 = v2.get("b").await.expect("get v2");
    let metric = &as_v2.spec.metrics.expect("metrics")[0];
    assert_eq!(
        metric
            .resource
            .as_ref()
            .and_then(|r| r.target.average_utilization),
        Some(70)
    );
    assert_eq!(
        server.objects("autoscaling", "horizontalpodautoscalers")[1]["apiVersion"],
        "autoscaling/v2"
    );
}
