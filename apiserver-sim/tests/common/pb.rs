//! Protobuf helpers of the tests: documents and watch frames built and read with kube-rs's
//! k8s-pb structs, an implementation of the Kubernetes protobuf messages independent of
//! the simulator's descriptor-driven one.

use apiserver_sim::ApiServer;
use k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message;

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
    let enough = |body: &[u8]| frames(body).len() >= n;
    let Some((head, body)) = super::read_watch(server, path, &[("Accept", ACCEPT)], enough).await
    else {
        return (0, String::new(), Vec::new());
    };
    let content_type = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-type"))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_default();
    (super::status_of(&head), content_type, frames(&body))
}
