//! A tiny HTTP server that serves the [`Fixture`]'s pre-serialized bytes: paginated lists,
//! watches (JSON lines), streaming-list initial events with the initial-events-end bookmark,
//! and a 410 on demand; across all namespaces or in one, as full pods or, when the `Accept`
//! header asks for it, as `PartialObjectMetadata` (`served.rs`). It runs in its own process (`pipeline-bench serve`) so that its memory
//! never counts in the measured process; [`ServerProcess`] starts it and talks to it.

use std::convert::Infallible;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};
use bytes::{Bytes, BytesMut};
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};

use crate::fixtures::{DEFAULT_NAMESPACES, Fixture, Marker, SENT_PLACEHOLDER};
use crate::served::{EventsTaken, MetadataBytes, Repr, Scope, View};

/// Frames are flushed once they reach this size (unless events are paced).
const FRAME_BYTES: usize = 256 * 1024;
/// Items per chunk of a list body.
const LIST_CHUNK: usize = 500;
/// Control endpoint: start sending the watch events.
pub const RELEASE_PATH: &str = "/bench/release";
/// Control endpoint: end open watches with a 410 and serve later lists at the relist version.
pub const EXPIRE_PATH: &str = "/bench/expire";

/// What a client needs to know about the server and its workload (printed by `serve`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInfo {
    /// Loopback port the server listens on.
    pub port: u16,
    /// Pods in the initial list.
    pub objects: usize,
    /// Watch events the server sends once released.
    pub events: usize,
    /// Pods a cache holds after all events.
    pub objects_after_events: usize,
    /// Average JSON size of a listed pod.
    pub average_pod_bytes: usize,
    /// The pod state that shows the last watch event reached the cache.
    pub watch_marker: Marker,
    /// The pod states that show a namespace's last watch event reached its cache, one per
    /// namespace with events ([`Fixture::namespace_markers`]).
    pub namespace_markers: Vec<Marker>,
    /// Whether `namespace_markers` covers every namespace that has events.
    pub markers_cover_every_namespace: bool,
    /// The pod states that show a relist reached the cache (every cache, with one per
    /// namespace).
    pub relist_markers: Vec<Marker>,
}

struct State {
    fixture: Fixture,
    /// The fixture as `PartialObjectMetadata`, for metadata lists and watches.
    metadata: MetadataBytes,
    /// Events per second when paced (stamping each with its send time); `None`: all at once.
    rate: Option<u32>,
    released: watch::Sender<bool>,
    events_taken: EventsTaken,
    /// Bumped by each expiry; a watch that started before the bump ends with a 410.
    expiries: watch::Sender<u64>,
}

type Body = BoxBody<Bytes, Infallible>;

/// Runs the server until the process is killed; prints its [`ServerInfo`] as one JSON line.
pub async fn serve(
    objects: usize,
    events: usize,
    namespaces: usize,
    rate: Option<u32>,
) -> Result<()> {
    let fixture = Fixture::build(objects, events, namespaces)?;
    let metadata = MetadataBytes::of(&fixture)?;
    let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await?;
    let info = ServerInfo {
        port: listener.local_addr()?.port(),
        objects,
        events,
        objects_after_events: fixture.objects_after_events(),
        average_pod_bytes: fixture.pod_bytes() / objects,
        watch_marker: fixture.watch_marker(),
        namespace_markers: fixture.namespace_markers(),
        markers_cover_every_namespace: fixture.markers_cover_every_namespace(),
        relist_markers: fixture.relist_markers(),
    };
    let state = Arc::new(State {
        fixture,
        metadata,
        rate,
        released: watch::Sender::new(false),
        events_taken: EventsTaken::default(),
        expiries: watch::Sender::new(0),
    });
    println!("{}", serde_json::to_string(&info)?);
    exit_when_stdin_closes();
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let state = Arc::clone(&state);
                async move { Ok::<_, Infallible>(route(&state, &req)) }
            });
            // A client going away mid-body is normal at the end of a measurement.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Ends this process once its parent closes our stdin (or dies).
fn exit_when_stdin_closes() {
    std::thread::spawn(|| {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        std::process::exit(0);
    });
}

fn route(state: &Arc<State>, req: &Request<Incoming>) -> Response<Body> {
    let query = Query::parse(req.uri().query().unwrap_or(""));
    let accept = req
        .headers()
        .get(http::header::ACCEPT)
        .and_then(|value| value.to_str().ok());
    let repr = Repr::of_accept(accept);
    match (req.method(), req.uri().path()) {
        (&Method::POST, RELEASE_PATH) => {
            state.released.send_replace(true);
            reply(StatusCode::OK, Bytes::from_static(b"{}"))
        }
        (&Method::POST, EXPIRE_PATH) => {
            state.expiries.send_modify(|n| *n += 1);
            reply(StatusCode::OK, Bytes::from_static(b"{}"))
        }
        (&Method::GET, path) => match Scope::of_path(path) {
            Some(scope) if query.watch => streamed(watch_body(state, &query, repr, scope)),
            Some(scope) => streamed(list_body(state, &query, repr, scope)),
            None => not_found(),
        },
        _ => not_found(),
    }
}

fn not_found() -> Response<Body> {
    reply(
        StatusCode::NOT_FOUND,
        Bytes::from_static(b"{\"kind\":\"Status\",\"code\":404}"),
    )
}

fn reply(status: StatusCode, body: Bytes) -> Response<Body> {
    let mut response = Response::new(Full::new(body).boxed());
    *response.status_mut() = status;
    json_content(response)
}

fn json_content(mut response: Response<Body>) -> Response<Body> {
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// A response whose body is whatever a task sends into the channel.
fn streamed(rx: mpsc::Receiver<Bytes>) -> Response<Body> {
    let frames = futures::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((Ok::<_, Infallible>(Frame::data(chunk)), rx))
    });
    json_content(Response::new(BodyExt::boxed(StreamBody::new(frames))))
}

/// The query parameters the server looks at.
#[derive(Debug, Default)]
struct Query {
    watch: bool,
    limit: usize,
    start: usize,
    send_initial_events: bool,
    /// The watch's `resourceVersion`, when numeric.
    resource_version: Option<u64>,
}

impl Query {
    fn parse(query: &str) -> Self {
        let mut parsed = Self::default();
        for pair in query.split('&') {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            match key {
                "watch" => parsed.watch = value == "true" || value == "1",
                "limit" => parsed.limit = value.parse().unwrap_or(0),
                "continue" => parsed.start = value.parse().unwrap_or(0),
                "sendInitialEvents" => parsed.send_initial_events = value == "true",
                "resourceVersion" => parsed.resource_version = value.parse().ok(),
                _ => {}
            }
        }
        parsed
    }
}

fn expired(state: &State) -> bool {
    *state.expiries.borrow() > 0
}

fn view(state: &State, repr: Repr, scope: Scope) -> View<'_> {
    View::new(&state.fixture, &state.metadata, repr, scope)
}

/// One page (or, without a limit, the whole list), streamed in chunks of [`LIST_CHUNK`] items.
fn list_body(state: &Arc<State>, query: &Query, repr: Repr, scope: Scope) -> mpsc::Receiver<Bytes> {
    let (tx, rx) = mpsc::channel(4);
    let state = Arc::clone(state);
    let (start, limit) = (query.start, query.limit);
    tokio::spawn(async move {
        let relist = expired(&state);
        let view = view(&state, repr, scope);
        for chunk in view.list_chunks(start, limit, LIST_CHUNK, relist) {
            if tx.send(chunk).await.is_err() {
                return;
            }
        }
    });
    rx
}

/// A watch: the initial events and their end bookmark if asked, then (once released, for the
/// first watch only) the fixture's events, then silence until the client leaves or an expiry.
fn watch_body(
    state: &Arc<State>,
    query: &Query,
    repr: Repr,
    scope: Scope,
) -> mpsc::Receiver<Bytes> {
    let (tx, rx) = mpsc::channel(4);
    let state = Arc::clone(state);
    let initial = query.send_initial_events;
    // After an expiry, a watch from a version older than the relist's is too old, as on a real
    // server: it gets its 410 at once (a client may open its watch after the expiry).
    let too_old = expired(&state)
        && query
            .resource_version
            .is_some_and(|rv| rv < state.fixture.relist_rv);
    tokio::spawn(async move {
        if too_old {
            return expire(&tx).await;
        }
        let view = view(&state, repr, scope);
        let mut expiries = state.expiries.subscribe();
        let seen = *expiries.borrow_and_update();
        if initial && send_initial_events(&view, &tx).await.is_err() {
            return;
        }
        let mut released = state.released.subscribe();
        tokio::select! {
            () = until(&mut released, |r| *r) => {}
            () = until(&mut expiries, |n| *n > seen) => return expire(&tx).await,
            () = tx.closed() => return,
        }
        if state.events_taken.take(&view) && send_events(&view, state.rate, &tx).await.is_err() {
            return;
        }
        tokio::select! {
            () = until(&mut expiries, |n| *n > seen) => expire(&tx).await,
            () = tx.closed() => {}
        }
    });
    rx
}

/// Resolves once the value satisfies `ready`; never if its sender is gone.
async fn until<T>(rx: &mut watch::Receiver<T>, ready: impl FnMut(&T) -> bool) {
    if rx.wait_for(ready).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn expire(tx: &mpsc::Sender<Bytes>) {
    let status = b"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"too old resource version\",\"reason\":\"Expired\",\"code\":410}}\n";
    let _ = tx.send(Bytes::from_static(status)).await;
}

type Closed = mpsc::error::SendError<Bytes>;

async fn send_initial_events(view: &View<'_>, tx: &mpsc::Sender<Bytes>) -> Result<(), Closed> {
    let mut buf = BytesMut::with_capacity(FRAME_BYTES + 4096);
    for pod in view.listed() {
        buf.extend_from_slice(b"{\"type\":\"ADDED\",\"object\":");
        buf.extend_from_slice(pod);
        buf.extend_from_slice(b"}\n");
        if buf.len() >= FRAME_BYTES {
            tx.send(buf.split().freeze()).await?;
        }
    }
    buf.extend_from_slice(view.end_bookmark().as_bytes());
    tx.send(buf.freeze()).await
}

async fn send_events(
    view: &View<'_>,
    rate: Option<u32>,
    tx: &mpsc::Sender<Bytes>,
) -> Result<(), Closed> {
    let Some(rate) = rate else {
        let mut buf = BytesMut::with_capacity(FRAME_BYTES + 4096);
        for (line, _) in view.events() {
            buf.extend_from_slice(line);
            if buf.len() >= FRAME_BYTES {
                tx.send(buf.split().freeze()).await?;
            }
        }
        return tx.send(buf.freeze()).await;
    };
    // Paced: a batch every millisecond, each event stamped with the time it is written.
    let per_tick = (rate as usize).div_ceil(1000).max(1);
    let period = Duration::from_secs_f64(per_tick as f64 / f64::from(rate.max(1)));
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let events: Vec<(&Bytes, usize)> = view.events().collect();
    for batch in events.chunks(per_tick) {
        ticks.tick().await;
        let mut buf = BytesMut::new();
        for &(line, offset) in batch {
            let start = buf.len();
            buf.extend_from_slice(line);
            let stamp = format!("{:020}", now_ns());
            buf[start + offset..start + offset + SENT_PLACEHOLDER.len()]
                .copy_from_slice(stamp.as_bytes());
        }
        tx.send(buf.freeze()).await?;
    }
    Ok(())
}

/// Wall-clock nanoseconds since the epoch (comparable across processes on one machine).
pub fn now_ns() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}

/// A `pipeline-bench serve` child process, killed on drop.
#[derive(Debug)]
pub struct ServerProcess {
    child: Child,
    /// What the server reported when it came up.
    pub info: ServerInfo,
}

impl ServerProcess {
    /// Starts the server with this workload and waits for its [`ServerInfo`].
    pub fn spawn(objects: usize, events: usize, rate: Option<u32>) -> Result<Self> {
        Self::spawn_in(objects, events, DEFAULT_NAMESPACES, rate)
    }

    /// [`spawn`](Self::spawn) with the pods spread over `namespaces` namespaces.
    pub fn spawn_in(
        objects: usize,
        events: usize,
        namespaces: usize,
        rate: Option<u32>,
    ) -> Result<Self> {
        let mut command = Command::new(std::env::current_exe()?);
        command.args([
            "serve",
            "--objects",
            &objects.to_string(),
            "--events",
            &events.to_string(),
            "--namespaces",
            &namespaces.to_string(),
        ]);
        if let Some(rate) = rate {
            command.args(["--rate", &rate.to_string()]);
        }
        // The server exits when its stdin closes, so it never outlives this process.
        let mut child = command
            .stdout(Stdio::piped())
            .stdin(Stdio::piped())
            .spawn()
            .context("starting the server process")?;
        let mut line = String::new();
        let info = child
            .stdout
            .take()
            .context("server stdout")
            .and_then(|stdout| Ok(BufReader::new(stdout).read_line(&mut line)?))
            .and_then(|_| Ok(serde_json::from_str::<ServerInfo>(&line)?));
        let info = match info {
            Ok(info) => info,
            Err(error) => {
                let _ = child.kill();
                let _ = child.wait();
                bail!("the server did not report its address ({error}): {line:?}");
            }
        };
        Ok(Self { child, info })
    }

    /// A `kube::Client` for this server.
    pub fn client(&self) -> Result<kube::Client> {
        let uri: http::Uri = format!("http://127.0.0.1:{}", self.info.port).parse()?;
        let mut config = kube::Config::new(uri);
        config.default_namespace = "default".into();
        config.read_timeout = Some(Duration::from_secs(600));
        Ok(kube::Client::try_from(config)?)
    }

    /// CPU time the server process has used so far (all its threads).
    pub fn cpu(&self) -> Result<Duration> {
        crate::cpu::of_process(self.child.id())
    }

    /// Posts to one of the control endpoints ([`RELEASE_PATH`], [`EXPIRE_PATH`]).
    pub async fn control(client: &kube::Client, path: &str) -> Result<()> {
        let request = Request::post(path).body(Vec::new())?;
        client.request_text(request).await?;
        Ok(())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
