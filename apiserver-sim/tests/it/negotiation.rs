//! Content negotiation across representations and encodings: a protobuf `Accept` clause
//! for a kind with a protobuf form gets protobuf, a `Table` clause gets a JSON `Table`
//! (tables are never protobuf), preference (`q`) decides between them, and a 406 lists the
//! media types the resource has. Tables of kinds served in another form than stored
//! (autoscaling/v1, events.k8s.io) carry their rows' objects in the requested version.
//! Metadata-only reads (`PartialObjectMetadata`, kube's `get_metadata`, `list_metadata` and
//! metadata watcher) leave the object's body out.
//!
//! Sources: apiserver `endpoints/handlers/negotiation` (`NegotiateOutputMediaType`),
//! `endpoints/handlers/response.go` (`asTable`) and the Kubernetes API concepts page
//! ("Receiving resources as Tables", "Protobuf encoding").

use crate::common;
use crate::common::pb::{self, PROTOBUF};
use crate::tables::{TABLE_ACCEPT, cells, columns};

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_pb::api::core::v1 as core;
use kube::api::{Api, ListParams};
use kube::runtime::{WatchStreamExt, reflector, watcher};
use serde_json::json;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

async fn get(server: &apiserver_sim::ApiServer, path: &str, accept: &str) -> common::Raw {
    common::raw(server, "GET", path, &[("Accept", accept)], b"").await
}

#[tokio::test]
async fn protobuf_and_tables_are_negotiated_together() {
    let server = common::server().await;
    server
        .create_json(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "default"}, "data": {"k": "v"}}))
        .expect("cm");

    // Protobuf first: protobuf.
    let r = get(
        &server,
        &format!("{CMS}/a"),
        &format!("{PROTOBUF},application/json"),
    )
    .await;
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let (_, kind, cm): (_, _, core::ConfigMap) = pb::decode(&r.bytes);
    assert_eq!(kind, "ConfigMap");
    assert_eq!(cm.data.get("k").map(String::as_str), Some("v"));

    // kubectl's table clauses before protobuf: a Table, in JSON.
    let r = get(&server, CMS, &format!("{TABLE_ACCEPT},{PROTOBUF}")).await;
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.json()["kind"], "Table");
    assert_eq!(cells(&r.json(), "a")[0], "a");

    // A protobuf table clause is skipped: tables are JSON (or YAML) only.
    let r = get(
        &server,
        CMS,
        &format!("{PROTOBUF};as=Table;v=v1;g=meta.k8s.io,{PROTOBUF}"),
    )
    .await;
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let (_, kind, _): (_, _, core::ConfigMapList) = pb::decode(&r.bytes);
    assert_eq!(kind, "ConfigMapList");

    // Preference beats position.
    let r = get(
        &server,
        CMS,
        &format!("{PROTOBUF};q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io"),
    )
    .await;
    assert_eq!(r.json()["kind"], "Table");
    let r = get(
        &server,
        CMS,
        &format!(
            "application/json;q=0.5,{PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
        ),
    )
    .await;
    assert_eq!(r.header("content-type"), Some(PROTOBUF));
    let (av, kind, _): (
        _,
        _,
        k8s_pb::apimachinery::pkg::apis::meta::v1::PartialObjectMetadataList,
    ) = pb::decode(&r.bytes);
    assert_eq!(
        (av.as_str(), kind.as_str()),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
}

#[tokio::test]
async fn not_acceptable_lists_the_resources_media_types() {
    let server = common::server().await;
    // (An `Accept` allowing neither JSON nor protobuf is refused before routing.)
    let with_protobuf = get(&server, CMS, "application/json;as=Foo;v=v1;g=meta.k8s.io").await;
    assert_eq!(with_protobuf.status, 406, "{}", with_protobuf.body);
    assert_eq!(
        with_protobuf.json()["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    // MutatingAdmissionPolicy v1 is newer than the protobuf descriptors; custom resources
    // have no protobuf form either.
    server
        .create_json(crate::crd::foo_crd("Namespaced", "foos", "Foo"))
        .expect("crd");
    let foos = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos";
    common::eventually_async("foos served", common::LIMIT, || async {
        get(&server, foos, "application/json").await.status == 200
    })
    .await;
    for path in [
        "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies",
        foos,
    ] {
        let r = get(&server, path, PROTOBUF).await;
        assert_eq!(r.status, 406, "{path}: {}", r.body);
        assert_eq!(
            r.json()["message"],
            "only the following media types are accepted: application/json, application/yaml",
            "{path}"
        );
        // With a JSON fallback: JSON, and a table still works.
        let r = get(&server, path, &format!("{PROTOBUF},application/json")).await;
        assert_eq!(r.header("content-type"), Some("application/json"), "{path}");
        assert_eq!(
            get(&server, path, TABLE_ACCEPT).await.json()["kind"],
            "Table"
        );
    }
}

#[tokio::test]
async fn tables_of_converted_kinds_carry_the_requested_version() {
    let server = common::server().await;
    server
        .create_json(json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 5, "metrics": [{"type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}}))
        .expect("hpa");
    let r = get(
        &server,
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers?includeObject=Object",
        TABLE_ACCEPT,
    )
    .await;
    let t = r.json();
    assert_eq!(
        columns(&t),
        [
            "Name",
            "Reference",
            "Targets",
            "MinPods",
            "MaxPods",
            "Replicas",
            "Age"
        ]
    );
    let row = &t["rows"][0];
    assert_eq!(row["cells"][1], "Deployment/web");
    assert_eq!(row["cells"][2], "cpu: <unknown>/60%");
    assert_eq!(row["object"]["apiVersion"], "autoscaling/v1");
    assert_eq!(row["object"]["spec"]["targetCPUUtilizationPercentage"], 60);

    server
        .create_json(json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default"}, "reason": "Pulled",
            "message": "image pulled", "involvedObject": {"kind": "Pod", "name": "p"}}))
        .expect("event");
    let r = get(
        &server,
        "/apis/events.k8s.io/v1/namespaces/default/events?includeObject=Object",
        TABLE_ACCEPT,
    )
    .await;
    let row = &r.json()["rows"][0];
    assert_eq!(row["cells"][3], "pod/p");
    assert_eq!(row["cells"][6], "image pulled");
    assert_eq!(row["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(row["object"]["note"], "image pulled");
}

#[tokio::test]
async fn metadata_only_representation() {
    let server = common::server().await;
    let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
    crate::list_watch::make_cm(&cms, "m", &[("a", "b")]).await;
    let meta = cms.get_metadata("m").await.expect("get_metadata");
    assert_eq!(
        meta.types.map(|t| t.kind).as_deref(),
        Some("PartialObjectMetadata")
    );
    let list = cms
        .list_metadata(&ListParams::default())
        .await
        .expect("list_metadata");
    assert_eq!(list.items.len(), 1);
    let r = common::raw(
        &server,
        "GET",
        CMS,
        &[(
            "Accept",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json",
        )],
        b"",
    )
    .await;
    assert_eq!(r.json()["kind"], "PartialObjectMetadataList");
    assert!(r.json()["items"][0].get("data").is_none());
    // kube's metadata watcher sees objects and their changes.
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(
        writer,
        watcher(
            Api::<kube::core::PartialObjectMeta<ConfigMap>>::default_namespaced(
                server.client().expect("client"),
            ),
            watcher::Config::default(),
        ),
    )
    .applied_objects();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while stream.next().await.is_some() {}
    });
    crate::list_watch::make_cm(&cms, "n", &[]).await;
    common::eventually("two objects in the cache", common::LIMIT, || {
        reader.state().len() == 2
    })
    .await;
    task.abort();
}
