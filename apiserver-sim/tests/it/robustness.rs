//! Bad input gets the documented Status error, and the server keeps serving.

use crate::common;

use apiserver_sim::{ApiServer, BODY_LIMIT};

const CMS: &str = "/api/v1/namespaces/default/configmaps";
const JSON: (&str, &str) = ("Content-Type", "application/json");

async fn expect(
    server: &ApiServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    code: u16,
    reason: &str,
) {
    let r = common::raw(server, method, path, headers, body).await;
    assert_eq!(r.status, code, "{method} {path}: {}", r.body);
    assert!(r.body.ends_with('\n'), "one line ending in a newline");
    assert_eq!(r.body.trim_end().lines().count(), 1);
    let s = r.json();
    assert_eq!(s["kind"], "Status");
    assert_eq!(s["status"], "Failure");
    assert_eq!(s["code"], code);
    assert_eq!(s["reason"], reason, "{method} {path}");
    // The server is still healthy.
    let h = common::raw(server, "GET", "/healthz", &[], b"").await;
    assert_eq!((h.status, h.body.as_str()), (200, "ok"));
}

#[tokio::test]
async fn bad_input_gets_status_errors() {
    let server = ApiServer::start().await.expect("server");
    // Malformed JSON bodies.
    expect(
        &server,
        "POST",
        CMS,
        &[JSON],
        b"{not json",
        400,
        "BadRequest",
    )
    .await;
    expect(&server, "POST", CMS, &[JSON], b"[1,2]", 400, "BadRequest").await;
    expect(&server, "POST", CMS, &[JSON], b"", 400, "BadRequest").await;
    expect(
        &server,
        "POST",
        CMS,
        &[JSON],
        br#"{"kind":"Secret","metadata":{"name":"x"}}"#,
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "POST",
        CMS,
        &[JSON],
        br#"{"metadata":{"name":"x","namespace":"other"}}"#,
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "PATCH",
        &format!("{CMS}/x"),
        &[("Content-Type", "application/merge-patch+json")],
        b"{oops",
        400,
        "BadRequest",
    )
    .await;
    // Missing name.
    expect(
        &server,
        "POST",
        CMS,
        &[JSON],
        br#"{"metadata":{}}"#,
        422,
        "Invalid",
    )
    .await;
    // RV on create.
    let r = common::raw(
        &server,
        "POST",
        CMS,
        &[JSON],
        br#"{"metadata":{"name":"x","resourceVersion":"5"}}"#,
    )
    .await;
    assert_eq!(r.status, 500);
    // Unknown resources of built-in groups (other unknown paths: `not_found.rs`).
    expect(&server, "GET", "/api/v1/widgets", &[], b"", 404, "NotFound").await;
    expect(&server, "GET", "/api/v2/pods", &[], b"", 404, "NotFound").await;
    expect(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps/a/b/c",
        &[],
        b"",
        404,
        "NotFound",
    )
    .await;
    expect(
        &server,
        "GET",
        "/api/v1/namespaces/default/configmaps/a/status",
        &[],
        b"",
        404,
        "NotFound",
    )
    .await;
    // Verbs not served.
    expect(
        &server,
        "POST",
        "/api/v1/configmaps",
        &[JSON],
        b"{}",
        405,
        "MethodNotAllowed",
    )
    .await;
    expect(
        &server,
        "POST",
        &format!("{CMS}/x"),
        &[JSON],
        b"{}",
        405,
        "MethodNotAllowed",
    )
    .await;
    // Unsupported media types: protobuf for a kind without a protobuf form (newer than the
    // protobuf descriptors, like custom resources), YAML, text.
    let proto = [("Content-Type", "application/vnd.kubernetes.protobuf")];
    let policies = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies";
    expect(
        &server,
        "POST",
        policies,
        &proto,
        b"k8s\x00",
        415,
        "UnsupportedMediaType",
    )
    .await;
    expect(&server, "POST", CMS, &proto, b"\x00\x01", 400, "BadRequest").await;
    // YAML bodies are decoded as upstream decodes them (this one names no object).
    let yaml = [("Content-Type", "application/yaml")];
    expect(&server, "POST", CMS, &yaml, b"a: b", 422, "Invalid").await;
    let created = common::raw(
        &server,
        "POST",
        &format!("{CMS}?dryRun=All"),
        &yaml,
        b"metadata:\n  name: from-yaml\ndata:\n  k: v\n",
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(created.json()["data"]["k"], "v");
    expect(
        &server,
        "PATCH",
        &format!("{CMS}/x"),
        &[("Content-Type", "text/plain")],
        b"{}",
        415,
        "UnsupportedMediaType",
    )
    .await;
    expect(
        &server,
        "GET",
        policies,
        &[("Accept", "application/vnd.kubernetes.protobuf")],
        b"",
        406,
        "NotAcceptable",
    )
    .await;
    // Huge body.
    let huge = vec![b' '; BODY_LIMIT + 1];
    expect(
        &server,
        "POST",
        CMS,
        &[JSON],
        &huge,
        413,
        "RequestEntityTooLarge",
    )
    .await;
    // Invalid query values.
    expect(
        &server,
        "GET",
        &format!("{CMS}?limit=abc"),
        &[],
        b"",
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "GET",
        &format!("{CMS}?resourceVersion=xyz"),
        &[],
        b"",
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "GET",
        &format!("{CMS}?labelSelector=a%20in%20b"),
        &[],
        b"",
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "GET",
        &format!("{CMS}?fieldSelector=spec.nope%3D1"),
        &[],
        b"",
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "GET",
        &format!("{CMS}?resourceVersion=1&resourceVersionMatch=Sometimes"),
        &[],
        b"",
        422,
        "Invalid",
    )
    .await;
    expect(
        &server,
        "GET",
        &format!("{CMS}?watch=1&timeoutSeconds=-5"),
        &[],
        b"",
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "GET",
        &format!("{CMS}?continue=%%%"),
        &[],
        b"",
        400,
        "BadRequest",
    )
    .await;
    expect(
        &server,
        "POST",
        &format!("{CMS}?dryRun=Some"),
        &[JSON],
        br#"{"metadata":{"name":"d"}}"#,
        422,
        "Invalid",
    )
    .await;
    expect(
        &server,
        "DELETE",
        &format!("{CMS}/x"),
        &[JSON],
        br#"{"propagationPolicy":"Sideways"}"#,
        422,
        "Invalid",
    )
    .await;
    // A bare trailing `?` is fine, and the server still works for real requests.
    let ok = common::raw(&server, "GET", &format!("{CMS}?"), &[], b"").await;
    assert_eq!(ok.status, 200);
    let created = common::raw(
        &server,
        "POST",
        CMS,
        &[JSON],
        br#"{"metadata":{"name":"fine"}}"#,
    )
    .await;
    assert_eq!(created.status, 201);
    // Deleting an object kept by a finalizer: 200, or 202 with an explicit orphanDependents=false.
    let held = br#"{"metadata":{"name":"held","finalizers":["x"]}}"#;
    assert_eq!(
        common::raw(&server, "POST", CMS, &[JSON], held)
            .await
            .status,
        201
    );
    let r = common::raw(
        &server,
        "DELETE",
        &format!("{CMS}/held"),
        &[JSON],
        br#"{"orphanDependents":false}"#,
    )
    .await;
    assert_eq!(r.status, 202);
    assert!(r.json()["metadata"]["deletionTimestamp"].is_string());
    // Dry run persists nothing.
    let dry = common::raw(
        &server,
        "POST",
        &format!("{CMS}?dryRun=All"),
        &[JSON],
        br#"{"metadata":{"name":"dry"}}"#,
    )
    .await;
    assert_eq!(dry.status, 201);
    assert_eq!(server.objects("", "configmaps").len(), 2);
}

#[tokio::test]
async fn discovery_version_health_and_openapi() {
    let server = ApiServer::start().await.expect("server");
    let api = common::raw(&server, "GET", "/api", &[], b"").await.json();
    assert_eq!(api["versions"][0], "v1");
    let v1 = common::raw(&server, "GET", "/api/v1", &[], b"")
        .await
        .json();
    let names: Vec<&str> = v1["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    for want in [
        "namespaces",
        "pods",
        "pods/status",
        "configmaps",
        "secrets",
        "services",
        "serviceaccounts",
        "events",
    ] {
        assert!(names.contains(&want), "{want} in /api/v1");
    }
    let apis = common::raw(&server, "GET", "/apis", &[], b"").await.json();
    let groups: Vec<&str> = apis["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["name"].as_str())
        .collect();
    for g in [
        "apps",
        "coordination.k8s.io",
        "events.k8s.io",
        "apiextensions.k8s.io",
    ] {
        assert!(groups.contains(&g), "{g} in /apis");
    }
    let apps = common::raw(&server, "GET", "/apis/apps", &[], b"")
        .await
        .json();
    assert_eq!(apps["preferredVersion"]["groupVersion"], "apps/v1");
    let appsv1 = common::raw(&server, "GET", "/apis/apps/v1", &[], b"")
        .await
        .json();
    assert!(
        appsv1["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| r["name"] == "deployments/scale")
    );
    let version = common::raw(&server, "GET", "/version?timeout=5s", &[], b"")
        .await
        .json();
    assert_eq!(version["major"], "1");
    for p in ["/healthz", "/readyz", "/livez"] {
        assert_eq!(common::raw(&server, "GET", p, &[], b"").await.status, 200);
    }
    let index = common::raw(&server, "GET", "/openapi/v3", &[], b"")
        .await
        .json();
    let url = index["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .expect("api/v1 in index")
        .to_string();
    let doc = common::raw(&server, "GET", &url, &[], b"").await.json();
    let ns_path = &doc["paths"]["/api/v1/namespaces/{name}"]["patch"];
    assert_eq!(
        ns_path["x-kubernetes-group-version-kind"]["kind"],
        "Namespace"
    );
    // kube's own discovery works.
    let d = kube::Discovery::new(server.client().expect("client"))
        .run()
        .await
        .expect("discovery");
    assert!(d.has_group("apps"));
}

/// A body over the limit sent in chunks (no `Content-Length` to check up front) is cut off
/// while it is read: 413, and the server keeps serving.
#[tokio::test]
async fn huge_chunked_body_gets_413() {
    use tokio::io::AsyncWriteExt;
    let server = ApiServer::start().await.expect("server");
    let mut s = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let head = format!(
        "POST {CMS} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.expect("head");
    // 64 KiB chunks until past the limit; the server may answer and close before the end.
    let chunk = vec![b' '; 64 * 1024];
    let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
    framed.extend_from_slice(&chunk);
    framed.extend_from_slice(b"\r\n");
    for _ in 0..=BODY_LIMIT / chunk.len() {
        if s.write_all(&framed).await.is_err() {
            break;
        }
    }
    let _ = s.write_all(b"0\r\n\r\n").await;
    expect_too_large_then_healthy(&server, &mut s).await;
    assert!(server.objects("", "configmaps").is_empty());
}

/// A `Content-Length` far over the limit is refused before any of the body is read.
#[tokio::test]
async fn oversized_content_length_is_refused_up_front() {
    use tokio::io::AsyncWriteExt;
    let server = ApiServer::start().await.expect("server");
    let mut s = tokio::net::TcpStream::connect(server.addr())
        .await
        .expect("connect");
    let head = format!(
        "POST {CMS} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n"
    );
    s.write_all(head.as_bytes()).await.expect("head");
    expect_too_large_then_healthy(&server, &mut s).await;
}

/// Reads the answer on `s` to its end: a 413 `RequestEntityTooLarge`; then the server still
/// answers `/healthz`.
async fn expect_too_large_then_healthy(server: &ApiServer, s: &mut tokio::net::TcpStream) {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    let read =
        tokio::time::timeout(std::time::Duration::from_secs(20), s.read_to_end(&mut buf)).await;
    let text = String::from_utf8_lossy(&buf);
    assert!(text.starts_with("HTTP/1.1 413"), "{read:?}: {text}");
    assert!(
        text.contains(r#""reason":"RequestEntityTooLarge""#),
        "{text}"
    );
    let h = common::raw(server, "GET", "/healthz", &[], b"").await;
    assert_eq!((h.status, h.body.as_str()), (200, "ok"));
}
