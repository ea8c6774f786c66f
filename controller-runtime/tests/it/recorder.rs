//! The event recorder: repeats become one event with a series count; distinct events stay
//! separate; a full queue drops and counts instead of blocking. Runs on the simulator and,
//! except the series window (minutes of the clock), with `KUBE_RT_TEST_KUBECONFIG` set, against
//! that cluster.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn},
    events::{EventRecord, EventType, Recorder, reference_to},
};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use testkit::eventually_some;

/// The events `controller` reported about the ConfigMap `a` (a whole cluster has events and
/// ConfigMaps of its own in the namespace).
async fn about_a(server: &TestCluster, controller: &str) -> Vec<Event> {
    let events = server.list::<Event>().await.unwrap();
    events
        .into_iter()
        .filter(|event| {
            event.reporting_controller.as_deref() == Some(controller)
                && event.regarding.as_ref().is_some_and(|r| {
                    r.kind.as_deref() == Some("ConfigMap") && r.name.as_deref() == Some("a")
                })
        })
        .collect()
}

fn record(reason: &str) -> EventRecord {
    EventRecord {
        type_: EventType::Normal,
        reason: reason.into(),
        action: "Reconcile".into(),
        note: Some(format!("{reason} happened")),
    }
}

#[tokio::test(start_paused = true)]
async fn shorthands_report_on_the_reconciled_object() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .named("shorthand")
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| async move {
                ctx.normal_event("Synced", "ConfigMap synced");
                ctx.warning_event("Odd", "no data.size");
                Ok::<_, ReconcileError>(Action::done())
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    let created = server.create(&cm("a", "1")).await.unwrap();
    let events = eventually_some("both events", Duration::from_secs(30), || async {
        let events = about_a(&server, "shorthand").await;
        (events.len() == 2).then_some(events)
    })
    .await;
    let by_reason = |reason: &str| {
        events
            .iter()
            .find(|event| event.reason.as_deref() == Some(reason))
            .unwrap()
    };
    let (synced, odd) = (by_reason("Synced"), by_reason("Odd"));
    assert_eq!(
        (
            synced.type_.as_deref(),
            synced.action.as_deref(),
            synced.note.as_deref()
        ),
        (Some("Normal"), Some("Synced"), Some("ConfigMap synced"))
    );
    assert_eq!(
        (
            odd.type_.as_deref(),
            odd.action.as_deref(),
            odd.note.as_deref()
        ),
        (Some("Warning"), Some("Odd"), Some("no data.size"))
    );
    let regarding = synced.regarding.as_ref().unwrap();
    assert_eq!(
        (
            regarding.kind.as_deref(),
            regarding.name.as_deref(),
            regarding.uid.as_ref()
        ),
        (Some("ConfigMap"), Some("a"), created.metadata.uid.as_ref())
    );
    assert_eq!(synced.reporting_controller.as_deref(), Some("shorthand"));

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn repeats_become_a_series() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .named("mirror")
        .build(reconciler_fn(
            move |_req: Request, ctx: Context<ConfigMap>| async move {
                if let Some(cm) = ctx.get() {
                    for _ in 0..3 {
                        ctx.recorder()
                            .publish(reference_to(cm.as_ref()), record("Synced"));
                    }
                    ctx.recorder()
                        .publish(reference_to(cm.as_ref()), record("Other"));
                }
                Ok::<_, ReconcileError>(Action::done())
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    server.create(&cm("a", "1")).await.unwrap();
    let series_count = |events: &[Event], reason: &str| {
        events
            .iter()
            .find(|event| event.reason.as_deref() == Some(reason))
            .map(|event| event.series.as_ref().map_or(1, |series| series.count))
    };
    let events = eventually_some("both events", Duration::from_secs(30), || async {
        let events = about_a(&server, "mirror").await;
        let done =
            series_count(&events, "Synced") == Some(3) && series_count(&events, "Other") == Some(1);
        done.then_some(events)
    })
    .await;
    assert_eq!(events.len(), 2);
    let synced = events
        .iter()
        .find(|event| event.reason.as_deref() == Some("Synced"))
        .unwrap();
    assert_eq!(synced.reporting_controller.as_deref(), Some("mirror"));
    assert_eq!(
        synced.regarding.as_ref().unwrap().name.as_deref(),
        Some("a")
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

#[tokio::test]
async fn a_full_queue_drops_and_counts() {
    let config = kube::Config::new("http://127.0.0.1:9".parse().unwrap());
    let (recorder, _task) = Recorder::new(kube::Client::try_from(config).unwrap(), "c", 2);
    let regarding = reference_to(&cm("a", "1"));
    for _ in 0..5 {
        recorder.publish(regarding.clone(), record("Busy"));
    }
    assert_eq!(recorder.dropped(), 3);
}

#[tokio::test(start_paused = true)]
async fn a_repeat_after_the_series_window_starts_a_new_event() {
    if testkit::cluster::sim_only("virtual time: the series window is minutes of the clock") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let (recorder, task) = Recorder::new(server.client().unwrap(), "c", 16);
    let stop = tokio_util::sync::CancellationToken::new();
    let writer = tokio::spawn(task.run_until(stop.clone()));
    let regarding = reference_to(&server.create(&cm("a", "1")).unwrap());
    let counts = || {
        let mut counts: Vec<i32> = server
            .list::<Event>()
            .into_iter()
            .map(|event| event.series.map_or(1, |series| series.count))
            .collect();
        counts.sort();
        counts
    };

    recorder.publish(regarding.clone(), record("Synced"));
    recorder.publish(regarding.clone(), record("Synced"));
    eventually("the series", Duration::from_secs(30), || counts() == [2]).await;
    // Within the window: still the same event.
    tokio::time::sleep(controller_runtime::events::SERIES_WINDOW - Duration::from_secs(60)).await;
    recorder.publish(regarding.clone(), record("Synced"));
    eventually("the third repeat", Duration::from_secs(30), || {
        counts() == [3]
    })
    .await;
    // The window is measured from the last repeat: past it, a new event starts.
    tokio::time::sleep(controller_runtime::events::SERIES_WINDOW + Duration::from_secs(1)).await;
    recorder.publish(regarding, record("Synced"));
    eventually("a new event", Duration::from_secs(30), || {
        counts() == [1, 3]
    })
    .await;
    assert_eq!(recorder.dropped(), 0);

    stop.cancel();
    writer.await.unwrap();
    server.shutdown().await;
}
