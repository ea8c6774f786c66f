//! External sources and the handle's `enqueue`: keys from a stream or from anywhere reach the
//! reconciler past predicates, a stream's errors and end are logged and counted while the
//! controller runs on, and invalid settings fail the build (or, for a source's priority, its
//! making) with a clear error.

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::controller::predicate::meta_fn;
use controller_runtime::controller::{
    Action, Context, Controller, Error, KeyStream, Priority, Request, Watch, reconciler_fn,
};
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::time::Instant;

const LIMIT: Duration = Duration::from_secs(60);

/// Reconciles seen: the key's name, its priority and when (tokio time).
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<(String, i32, Instant)>>>);

impl Seen {
    fn reconciler(&self) -> impl controller_runtime::controller::Reconciler<ConfigMap> {
        let seen = self.clone();
        reconciler_fn(move |request: Request, ctx: Context<ConfigMap>| {
            seen.0.lock().push((
                request.name().to_owned(),
                ctx.priority().get(),
                Instant::now(),
            ));
            async { Ok::<_, Infallible>(Action::done()) }
        })
    }

    fn names(&self) -> Vec<String> {
        self.0
            .lock()
            .iter()
            .map(|(name, ..)| name.clone())
            .collect()
    }

    fn find(&self, name: &str) -> Option<(i32, Instant)> {
        self.0
            .lock()
            .iter()
            .find(|(seen, ..)| seen == name)
            .map(|(_, priority, at)| (*priority, *at))
    }
}

fn key(name: &str) -> ObjectKey {
    ObjectKey::namespaced(NS, name).unwrap()
}

/// A stream of the keys sent on a channel; it ends when every sender is gone.
fn channel() -> (
    mpsc::UnboundedSender<ObjectKey>,
    impl futures::Stream<Item = ObjectKey> + Send + 'static,
) {
    let (sender, receiver) = mpsc::unbounded_channel();
    let stream = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|key| (key, receiver))
    });
    (sender, stream)
}

#[tokio::test(start_paused = true)]
async fn stream_keys_reach_the_reconciler_past_predicates_and_errors_and_ends_are_counted() {
    let server = TestCluster::start().await.unwrap();
    server.create(&cm("watched", "1")).await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let seen = Seen::default();
    let (sender, from_channel) = channel();
    // A finite source: a key, an error, a request, then its end.
    let finite = futures::stream::iter(vec![
        Ok::<Request, String>(Request::new(key("first"))),
        Err("the bus dropped a message".to_owned()),
        Ok(Request::new(key("after-error"))),
    ]);
    let handle = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        // No watch event passes; source keys are not events of objects.
        .with_event_filter(meta_fn(|_| false))
        .watches_stream(finite)
        .watches_stream(KeyStream::new(from_channel).priority(Priority::new(5).unwrap()))
        .build(seen.reconciler())
        .unwrap();
    let running = spawn(&manager);

    eventually("the finite source's keys", LIMIT, || {
        seen.find("first").is_some() && seen.find("after-error").is_some()
    })
    .await;
    eventually("its error and end counted", LIMIT, || {
        handle.stats().source_errors() == 1 && handle.stats().sources_ended() == 1
    })
    .await;
    // The controller runs on with its other source.
    sender.send(key("from-channel")).unwrap();
    eventually("the channel's key", LIMIT, || {
        seen.find("from-channel").is_some()
    })
    .await;
    assert_eq!(
        seen.find("from-channel").map(|(priority, _)| priority),
        Some(5)
    );
    assert_eq!(seen.find("first").map(|(priority, _)| priority), Some(0));
    assert!(seen.find("watched").is_none(), "{:?}", seen.names());

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn the_handle_enqueues_with_a_priority_and_a_delay() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let seen = Seen::default();
    let handle = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(seen.reconciler())
        .unwrap();
    // Before the manager starts: the key waits for the workers.
    handle.enqueue(key("early"), Priority::new(3).unwrap(), Duration::ZERO);
    let running = spawn(&manager);
    eventually("the early key", LIMIT, || seen.find("early").is_some()).await;
    assert_eq!(seen.find("early").map(|(priority, _)| priority), Some(3));

    let asked = Instant::now();
    handle.enqueue(key("later"), Priority::LOW, Duration::from_secs(30));
    eventually("the delayed key", Duration::from_secs(120), || {
        seen.find("later").is_some()
    })
    .await;
    let (priority, at) = seen.find("later").unwrap();
    assert_eq!(priority, -100);
    assert!(at - asked >= Duration::from_secs(30), "{:?}", at - asked);

    // After the controller stopped, keys are dropped.
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    handle.enqueue(key("too-late"), Priority::NORMAL, Duration::ZERO);
    assert!(seen.find("too-late").is_none());
}

#[tokio::test]
async fn invalid_debounces_fail_the_build_and_out_of_range_priorities_are_refused() {
    let server = TestCluster::start().await.unwrap();
    let manager = manager(&server).build();
    let reason = |result: Result<_, Error>| match result {
        Err(Error::InvalidSetting { reason, .. }) => reason,
        other => panic!("expected an invalid setting, got {other:?}"),
    };
    let seen = Seen::default();

    let zero = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .debounce(Duration::ZERO, Duration::from_secs(1))
        .build(seen.reconciler());
    assert!(reason(zero).contains("quiet time must be above zero"));

    let short = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .debounce(Duration::from_secs(2), Duration::from_secs(1))
        .build(seen.reconciler());
    assert!(reason(short).contains("must be at least the quiet time"));

    // A source's priority is checked where it is made: an out-of-range one never reaches the
    // builder.
    let error = Priority::new(5000).unwrap_err();
    assert!(
        error.to_string().contains("priority 5000 is out of range"),
        "{error}"
    );
    assert!(Priority::try_from(-1001).is_err());
    assert_eq!(Priority::new(1000).unwrap(), Priority::MAX);

    // Nothing was registered: the name is still free.
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .debounce(Duration::from_secs(1), Duration::from_secs(1))
        .build(seen.reconciler())
        .unwrap();
}
