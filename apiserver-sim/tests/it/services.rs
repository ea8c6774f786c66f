//! Services as the Service registry and the endpoints controllers treat them: a new Service
//! gets its defaults and a unique cluster IP from 10.96.0.0/12 (an address asked for that is
//! taken is refused, a deleted Service's address is free again, a headless one stays
//! `None`); with the workload simulator on, its ready pods are listed in Endpoints and an
//! EndpointSlice owned by it.

use std::net::Ipv4Addr;

use apiserver_sim::ApiServer;
use serde_json::{Value, json};
use testkit::eventually;

use super::workloads::{DEADLINE, owned, server};

fn service(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "default"}, "spec": spec})
}

fn in_service_range(ip: &str) -> bool {
    ip.parse::<Ipv4Addr>()
        .is_ok_and(|a| u32::from(a) >> 20 == u32::from(Ipv4Addr::new(10, 96, 0, 0)) >> 20)
}

#[tokio::test]
async fn services_get_unique_cluster_ips() {
    let server = ApiServer::start().await.expect("server");
    let a = server
        .create_json(service(
            "a",
            json!({"selector": {"app": "a"}, "ports": [{"port": 80}]}),
        ))
        .expect("a");
    let b = server
        .create_json(service("b", json!({"ports": [{"port": 80}]})))
        .expect("b");
    let ip = a["spec"]["clusterIP"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(in_service_range(&ip), "{ip}");
    assert_eq!(a["spec"]["clusterIPs"], json!([ip]));
    assert_eq!(a["spec"]["type"], "ClusterIP");
    assert_eq!(a["spec"]["ipFamilies"], json!(["IPv4"]));
    assert_eq!(a["spec"]["ipFamilyPolicy"], "SingleStack");
    assert_eq!(a["spec"]["sessionAffinity"], "None");
    assert_eq!(a["spec"]["ports"][0]["targetPort"], 80);
    assert_eq!(a["spec"]["ports"][0]["protocol"], "TCP");
    assert_ne!(b["spec"]["clusterIP"], a["spec"]["clusterIP"]);

    let taken = server
        .create_json(service(
            "c",
            json!({"clusterIP": ip, "ports": [{"port": 80}]}),
        ))
        .expect_err("a taken address is refused");
    let text = taken.to_string();
    assert!(text.contains("provided IP is already allocated"), "{text}");

    let headless = server
        .create_json(service(
            "h",
            json!({"clusterIP": "None", "ports": [{"port": 80}]}),
        ))
        .expect("headless");
    assert_eq!(headless["spec"]["clusterIPs"], json!(["None"]));
    let external = server
        .create_json(service(
            "x",
            json!({"type": "ExternalName", "externalName": "db.example.com"}),
        ))
        .expect("external");
    assert!(external["spec"].get("clusterIP").is_none(), "{external}");

    // Once `a` is gone its address may be asked for again.
    let client = server.client().expect("client");
    let api: kube::Api<k8s_openapi::api::core::v1::Service> = kube::Api::default_namespaced(client);
    api.delete("a", &Default::default())
        .await
        .expect("delete a");
    let again = server
        .create_json(service(
            "c",
            json!({"clusterIP": ip, "ports": [{"port": 80}]}),
        ))
        .expect("the released address");
    assert_eq!(again["spec"]["clusterIP"], ip.as_str());
}

#[tokio::test]
async fn ready_pods_are_a_services_endpoints() {
    let server = server(true).await;
    server
        .create_json(json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "web", "image": "nginx",
                        "ports": [{"name": "http", "containerPort": 8080}]}]}}}}))
        .expect("deployment");
    let svc = server
        .create_json(service(
            "web",
            json!({"selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}),
        ))
        .expect("service");
    let uid = svc["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    eventually(
        "two ready addresses in Endpoints and the EndpointSlice",
        DEADLINE,
        || {
            let eps = server.objects("", "endpoints");
            let ep_ready = eps.iter().any(|e| {
                e["metadata"]["name"] == "web"
                    && e["subsets"][0]["addresses"]
                        .as_array()
                        .is_some_and(|a| a.len() == 2)
                    && e["subsets"][0]["ports"]
                        == json!([{"name": "http", "port": 8080, "protocol": "TCP"}])
            });
            let slices = owned(&server, "discovery.k8s.io", "endpointslices", &uid);
            let slice_ready = slices.len() == 1
                && slices[0]["endpoints"].as_array().is_some_and(|es| {
                    es.len() == 2 && es.iter().all(|e| e["conditions"]["ready"] == true)
                })
                && slices[0]["metadata"]["labels"]["kubernetes.io/service-name"] == "web";
            ep_ready && slice_ready
        },
    )
    .await;
    let client = server.client().expect("client");
    let api: kube::Api<k8s_openapi::api::core::v1::Service> = kube::Api::default_namespaced(client);
    api.delete("web", &Default::default())
        .await
        .expect("delete service");
    eventually("Endpoints and EndpointSlice removed", DEADLINE, || {
        server.objects("", "endpoints").is_empty()
            && server
                .objects("discovery.k8s.io", "endpointslices")
                .is_empty()
    })
    .await;
    server.shutdown().await;
}
