//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::time::Duration;

pub mod kubectl;
pub mod pb;

use apiserver_sim::ApiServer;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

pub use testkit::{eventually, eventually_async};

/// How long a test waits for a condition (in tokio time; see `testkit::WALL_CLOCK_FLOOR`).
pub const LIMIT: Duration = Duration::from_secs(10);

/// Starts a server with a short bookmark interval.
pub async fn server() -> ApiServer {
    ApiServer::builder()
        .bookmark_interval(Duration::from_millis(200))
        .start()
        .await
        .expect("server starts")
}

/// A raw HTTP/1.1 response.
#[derive(Debug)]
pub struct Raw {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    /// The body as received (dechunked), for binary (protobuf) answers.
    pub bytes: Vec<u8>,
}

impl Raw {
    pub fn json(&self) -> Value {
        serde_json::from_str(self.body.trim_end()).unwrap_or(Value::Null)
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    /// Lines of a watch body, parsed.
    pub fn events(&self) -> Vec<Value> {
        self.body
            .lines()
            .map(|l| serde_json::from_str(l).expect("each watch line is JSON"))
            .collect()
    }
}

/// The data of a chunked HTTP/1.1 body (complete chunks only).
pub fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(pos) = body.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(std::str::from_utf8(&body[..pos]).unwrap_or("0").trim(), 16)
                .unwrap_or(0);
        body = &body[pos + 2..];
        if size == 0 || body.len() < size {
            break;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[(size + 2).min(body.len())..];
    }
    out
}

/// Sends one request on a fresh connection (`Connection: close`) and reads the whole reply.
pub async fn raw(
    server: &ApiServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Raw {
    let mut s = TcpStream::connect(server.addr()).await.expect("connect");
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    s.write_all(req.as_bytes()).await.expect("write head");
    // The server may answer (413) before reading a huge body; ignore write errors then.
    let _ = s.write_all(body).await;
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut buf)).await;
    parse_response(&buf).unwrap_or_else(|| panic!("no answer to {method} {path}: {read:?}"))
}

/// Opens a watch with a raw request and reads until `n` events arrived or the stream
/// ended (or 10 s passed). Returns the HTTP status and the events.
pub async fn watch_events(server: &ApiServer, path: &str, n: usize) -> (u16, Vec<Value>) {
    let enough = |body: &[u8]| body.iter().filter(|b| **b == b'\n').count() >= n;
    let Some((head, body)) = read_watch(server, path, &[], enough).await else {
        return (0, Vec::new());
    };
    let events = String::from_utf8_lossy(&body)
        .lines()
        .take(n)
        .map(|l| serde_json::from_str(l).expect("watch line is JSON"))
        .collect();
    (status_of(&head), events)
}

/// Opens a watch with a raw request (and these extra headers) and reads until `enough` holds
/// for the de-chunked body, the stream ends, or 10 s pass. Returns the response head and the
/// de-chunked body, or `None` when no complete head arrived.
pub async fn read_watch(
    server: &ApiServer,
    path: &str,
    headers: &[(&str, &str)],
    enough: impl Fn(&[u8]) -> bool,
) -> Option<(String, Vec<u8>)> {
    let mut s = TcpStream::connect(server.addr()).await.expect("connect");
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut chunk = [0u8; 8192];
        let read = tokio::time::timeout_at(deadline, s.read(&mut chunk)).await;
        let done = match read {
            Ok(Ok(0)) | Ok(Err(_)) | Err(_) => true,
            Ok(Ok(k)) => {
                buf.extend_from_slice(&chunk[..k]);
                false
            }
        };
        if let Some(split) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let body = dechunk(&buf[split + 4..]);
            if enough(&body) || done {
                return Some((String::from_utf8_lossy(&buf[..split]).to_string(), body));
            }
        }
        if done {
            return None;
        }
    }
}

/// The status code of a response head (0 when it has none).
pub fn status_of(head: &str) -> u16 {
    head.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// `type` of each event.
pub fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Like [`raw`], but `None` when the connection is closed before a complete answer (for
/// servers under chaos, whose restarts cut connections).
pub async fn try_raw(server: &ApiServer, method: &str, path: &str) -> Option<Raw> {
    let mut s = TcpStream::connect(server.addr()).await.ok()?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.ok()?;
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut buf))
        .await
        .ok()?
        .ok()?;
    parse_response(&buf)
}

/// Opens a watch with a raw request and reads until the server ends the stream. Returns
/// the HTTP status and every event, or `None` when the stream was still open after 10 s or
/// ended without the final zero-length chunk (so a test can assert a clean end).
pub async fn watch_until_closed(server: &ApiServer, path: &str) -> Option<(u16, Vec<Value>)> {
    let mut s = TcpStream::connect(server.addr()).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut buf)).await;
    if !matches!(read, Ok(Ok(_))) {
        return None;
    }
    let split = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    if chunked && !buf.ends_with(b"0\r\n\r\n") {
        return None;
    }
    let body = dechunk(&buf[split + 4..]);
    let events = String::from_utf8_lossy(&body)
        .lines()
        .map(|l| serde_json::from_str(l).expect("watch line is JSON"))
        .collect();
    Some((status, events))
}

/// The status, headers and body (de-chunked) of a whole HTTP/1.1 response; `None` when the
/// bytes hold no complete head.
fn parse_response(buf: &[u8]) -> Option<Raw> {
    let split = buf.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&buf[..split]).to_string();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let raw_body = &buf[split + 4..];
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(raw_body)
    } else {
        raw_body.to_vec()
    };
    Some(Raw {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
        bytes: body,
    })
}
