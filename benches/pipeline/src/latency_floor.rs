//! The latency floor of `e2e_latency`: the same paced watch, read by one task that decodes each
//! event with kube's own watch stream and keeps nothing. What it measures (the server's pacing
//! and write, loopback, hyper, one decode) is in every client's latency; what a controller adds
//! is the difference.

use anyhow::{Context as _, Result, bail};
use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, WatchEvent, WatchParams};

use crate::controller::{PHASE_TIMEOUT, StageFigures, since_sent};
use crate::server::{RELEASE_PATH, ServerProcess, now_ns};

/// Latency from the event leaving the server to its decoding by a bare watch, over `events`
/// events paced at `rate`/s from a server whose fixture has `objects` pods, as in
/// `e2e_latency` (nothing is listed here: the watch starts at once).
pub async fn run(objects: usize, events: usize, rate: u32) -> Result<StageFigures> {
    let server = ServerProcess::spawn(objects, events, Some(rate))?;
    let client = server.client()?;
    let pods: Api<Pod> = Api::all(client.clone());
    let stream = pods
        .watch(&WatchParams::default().timeout(290), "0")
        .await
        .context("opening the watch")?;
    ServerProcess::control(&client, RELEASE_PATH).await?;
    let mut stream = std::pin::pin!(stream);
    let (mut seen, mut latencies_us) = (0, Vec::with_capacity(events));
    let read = async {
        while seen < events {
            let Some(event) = stream.next().await else {
                bail!("the watch ended after {seen} of {events} events");
            };
            let received = now_ns();
            match event.context("a watch event")? {
                WatchEvent::Added(pod) | WatchEvent::Modified(pod) | WatchEvent::Deleted(pod) => {
                    latencies_us.extend(since_sent(&pod, received));
                    seen += 1;
                }
                WatchEvent::Bookmark(_) => {}
                WatchEvent::Error(status) => bail!("the watch failed: {status:?}"),
            }
        }
        Ok(())
    };
    tokio::time::timeout(PHASE_TIMEOUT, read)
        .await
        .context("timed out reading the watch")??;
    Ok(StageFigures::of(latencies_us))
}
