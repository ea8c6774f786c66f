//! Protobuf helpers of the tests: documents and watch frames built and read with kube-rs's
//! k8s-pb structs, an implementation of the Kubernetes protobuf messages independent of
//! the simulator's descriptor-driven one.

use std::time::Duration;

use apiserver_sim::ApiServer;
use k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";
/// What client-go's typed clients accept.
pub const ACCEPT: &str = "application/vnd.kubernetes.protobuf,application/json";

/// `k8s\0` + `runtime.Unknown` around a message.
pub fn wrap<M: Message>(api_version: &str, kind: &str, m: &M) -> Vec<u8> {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(api_version.into()),
            kind: Some(kind.into()),
        }),
        raw: Some(m.encode_to_vec()),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut out = b"k8s\x00".to_vec();
    out.extend_from_slice(&unknown.encode_to_vec());
    out
}

/// The type meta and message of a protobuf document.
pub fn decode<M: Message + Default>(doc: &[u8]) -> (String, String, M) {
    let body = doc.strip_prefix(b"k8s\x00").expect("k8s\\0 prefix");
    let unknown = Unknown::decode(body).expect("runtime.Unknown");
    let tm = unknown.type_meta.unwrap_or_default();
    let msg = M::decode(unknown.raw.unwrap_or_default().as_slice()).expect("message");
    (
        tm.api_version.unwrap_or_default(),
        tm.kind.unwrap_or_default(),
        msg,
    )
}

/// The (type, object document) of each complete length-prefixed watch frame.
pub fn frames(mut body: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    while body.len() >= 4 {
        let len = u32::from_be_bytes([body[0], body[1], body[2], body[3]]) as usize;
        let Some(frame) = body.get(4..4 + len) else {
            break;
        };
        let ev = WatchEvent::decode(frame).expect("WatchEvent");
        out.push((
            ev.r#type.unwrap_or_default(),
            ev.object.and_then(|o| o.raw).unwrap_or_default(),
        ));
        body = &body[4 + len..];
    }
    out
}

/// Opens a watch accepting protobuf and reads until `n` frames arrived (or 10 s passed).
/// Returns the status, the `Content-Type` and the frames.
pub async fn watch(
    server: &ApiServer,
    path: &str,
    n: usize,
) -> (u16, String, Vec<(String, Vec<u8>)>) {
    let mut s = TcpStream::connect(server.addr()).await.expect("connect");
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nAccept: {ACCEPT}\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut chunk = [0u8; 8192];
        let done = match tokio::time::timeout_at(deadline, s.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => true,
            Ok(Ok(k)) => {
                buf.extend_from_slice(&chunk[..k]);
                false
            }
        };
        if let Some(split) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let got = frames(&super::dechunk(&buf[split + 4..]));
            if got.len() >= n || done {
                let head = String::from_utf8_lossy(&buf[..split]).to_string();
                let status = head
                    .split_whitespace()
                    .nth(1)
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(0);
                let ct = head
                    .lines()
                    .filter_map(|l| l.split_once(':'))
                    .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-type"))
                    .map(|(_, v)| v.trim().to_string())
                    .unwrap_or_default();
                return (status, ct, got);
            }
        }
        if done {
            return (0, String::new(), Vec::new());
        }
    }
}
