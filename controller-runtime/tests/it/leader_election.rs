//! Three managers electing on one Lease. Exactly one leads; a graceful
//! stop hands over within a retry period; a killed leader (no release) is replaced after the
//! lease duration; a leader whose lease writes fail steps down by its renew deadline; and no two
//! managers ever act as leader at the same time (every reconcile records who acted and when, on
//! the shared tokio clock, and the test checks the records against the leadership intervals).
//!
//! Runs on paused tokio time with the default timings (15 s / 10 s / 2 s): the simulated
//! minutes cost milliseconds. The warm-up test runs with `KUBE_RT_TEST_KUBECONFIG` set against
//! that cluster too.

use crate::common;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, Request, Watch, reconciler_fn},
    leader_election::LeaderElectionConfig,
    manager::{Error, Manager},
};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio::time::Instant;

const LEASE: &str = "cr-test";
const LEASE_DURATION: Duration = Duration::from_secs(15);
const RENEW_DEADLINE: Duration = Duration::from_secs(10);
const RETRY_PERIOD: Duration = Duration::from_secs(2);

/// What happened, to whom, when (tokio's clock, shared by every manager of the test).
#[derive(Clone, Debug, PartialEq)]
enum Event {
    StartedLeading(String, Instant),
    StoppedLeading(String, Instant),
    /// A reconciler acted (at its start and again at its end).
    Acted(String, Instant),
}

#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<Event>>>);

impl Log {
    fn push(&self, event: Event) {
        self.0.lock().push(event);
    }

    fn events(&self) -> Vec<Event> {
        self.0.lock().clone()
    }

    fn acts_by(&self, who: &str) -> usize {
        self.events()
            .iter()
            .filter(|event| matches!(event, Event::Acted(id, _) if id == who))
            .count()
    }

    fn started_leading(&self, who: &str) -> Option<Instant> {
        self.events().iter().find_map(|event| match event {
            Event::StartedLeading(id, at) if id == who => Some(*at),
            _ => None,
        })
    }

    fn stopped_leading(&self, who: &str) -> Option<Instant> {
        self.events().iter().find_map(|event| match event {
            Event::StoppedLeading(id, at) if id == who => Some(*at),
            _ => None,
        })
    }

    /// Leadership intervals never overlap, and every act lies within its actor's interval.
    fn check_no_two_leaders(&self) {
        let events = self.events();
        let mut intervals: Vec<(String, Instant, Option<Instant>)> = Vec::new();
        for event in &events {
            match event {
                Event::StartedLeading(id, at) => intervals.push((id.clone(), *at, None)),
                Event::StoppedLeading(id, at) => {
                    let open = intervals
                        .iter_mut()
                        .rev()
                        .find(|(who, _, end)| who == id && end.is_none())
                        .expect("stopped leading without having started");
                    open.2 = Some(*at);
                }
                Event::Acted(..) => {}
            }
        }
        for (i, (a, a_start, a_end)) in intervals.iter().enumerate() {
            for (b, b_start, b_end) in intervals.iter().skip(i + 1) {
                let a_end = a_end.unwrap_or(Instant::now());
                let b_end = b_end.unwrap_or(Instant::now());
                assert!(
                    a_end <= *b_start || b_end <= *a_start,
                    "{a} and {b} led at the same time: {intervals:?}"
                );
            }
        }
        for event in &events {
            if let Event::Acted(id, at) = event {
                assert!(
                    intervals.iter().any(|(who, start, end)| who == id
                        && start <= at
                        && end.is_none_or(|end| *at <= end)),
                    "{id} acted at {at:?} without leading: {intervals:?}"
                );
            }
        }
    }
}

struct Candidate {
    id: String,
    manager: Arc<Manager>,
    running: JoinHandle<Result<(), Error>>,
}

/// A manager electing on the test lease, with a controller that acts on every ConfigMap
/// every 500 ms (each reconcile takes 100 ms and records two acts).
fn candidate(server: &ApiServer, id: &str, log: &Log) -> Candidate {
    let (started, stopped) = (log.clone(), log.clone());
    let (who_started, who_stopped) = (id.to_owned(), id.to_owned());
    let config = LeaderElectionConfig::new(NS, LEASE)
        .identity(id)
        .lease_duration(LEASE_DURATION)
        .renew_deadline(RENEW_DEADLINE)
        .retry_period(RETRY_PERIOD)
        .on_started_leading(move || {
            started.push(Event::StartedLeading(who_started.clone(), Instant::now()))
        })
        .on_stopped_leading(move || {
            stopped.push(Event::StoppedLeading(who_stopped.clone(), Instant::now()))
        });
    let manager = Arc::new(manager(server).leader_election(config).build());
    let (acts, who) = (log.clone(), id.to_owned());
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |_req: Request, _ctx: Context<ConfigMap>| {
                let (acts, who) = (acts.clone(), who.clone());
                async move {
                    acts.push(Event::Acted(who.clone(), Instant::now()));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    acts.push(Event::Acted(who, Instant::now()));
                    Ok::<_, Infallible>(Action::requeue_after(Duration::from_millis(500)))
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    Candidate {
        id: id.to_owned(),
        manager,
        running,
    }
}

fn leaders(candidates: &[Candidate]) -> Vec<&str> {
    candidates
        .iter()
        .filter(|candidate| candidate.manager.is_leader())
        .map(|candidate| candidate.id.as_str())
        .collect()
}

fn lease_holder(server: &ApiServer) -> Option<String> {
    server
        .list::<Lease>()
        .into_iter()
        .find(|lease| lease.metadata.name.as_deref() == Some(LEASE))
        .and_then(|lease| lease.spec?.holder_identity)
        .filter(|holder| !holder.is_empty())
}

/// Waits until exactly one candidate leads and has reconciled; returns its index.
async fn one_leader(candidates: &[Candidate], log: &Log) -> usize {
    eventually("a leader", Duration::from_secs(60), || {
        leaders(candidates).len() == 1
    })
    .await;
    let leader = leaders(candidates)[0].to_owned();
    eventually("the leader reconciling", Duration::from_secs(30), || {
        log.acts_by(&leader) >= 2
    })
    .await;
    // Stable: still exactly this one over a few lease durations.
    for _ in 0..100 {
        assert_eq!(leaders(candidates), vec![leader.as_str()]);
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    candidates
        .iter()
        .position(|candidate| candidate.id == leader)
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn graceful_stop_hands_over_within_a_retry_period_and_a_killed_leader_after_the_lease() {
    if testkit::cluster::sim_only("virtual time: the hand-over times are asserted on the clock") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    server.create(&cm("work", "1")).unwrap();
    let log = Log::default();
    let mut candidates: Vec<Candidate> = ["a", "b", "c"]
        .iter()
        .map(|id| candidate(&server, id, &log))
        .collect();

    let first = one_leader(&candidates, &log).await;
    let first = candidates.remove(first);
    assert_eq!(lease_holder(&server).as_deref(), Some(first.id.as_str()));
    for standby in &candidates {
        assert_eq!(
            standby.manager.elector().unwrap().leader().as_deref(),
            Some(first.id.as_str())
        );
        assert_eq!(log.acts_by(&standby.id), 0, "a standby reconciled");
    }

    // Graceful stop: the lease is released, a standby takes over at its next try.
    first.manager.shutdown_handle().shutdown();
    first.running.await.unwrap().unwrap();
    let released = Instant::now();
    assert_eq!(lease_holder(&server), None, "the lease was released");
    eventually("a new leader", Duration::from_secs(30), || {
        leaders(&candidates).len() == 1
    })
    .await;
    let second = candidates.remove(
        candidates
            .iter()
            .position(|candidate| candidate.manager.is_leader())
            .unwrap(),
    );
    let took_over = log.started_leading(&second.id).unwrap();
    assert!(
        took_over - released <= RETRY_PERIOD.mul_f64(1.2) + Duration::from_millis(100),
        "graceful handover took {:?}",
        took_over - released
    );
    eventually(
        "the second leader reconciling",
        Duration::from_secs(30),
        || log.acts_by(&second.id) >= 2,
    )
    .await;

    // Kill: no release; the last candidate waits the lease duration from its last observed
    // renewal.
    second.running.abort();
    let _ = second.running.await;
    let killed = Instant::now();
    assert_eq!(lease_holder(&server).as_deref(), Some(second.id.as_str()));
    let third = &candidates[0];
    eventually(
        "the last candidate leading",
        Duration::from_secs(60),
        || third.manager.is_leader(),
    )
    .await;
    let took_over = log.started_leading(&third.id).unwrap();
    let waited = took_over - killed;
    assert!(
        waited >= LEASE_DURATION - RETRY_PERIOD.mul_f64(1.2),
        "took over a killed leader's lease after only {waited:?}"
    );
    assert!(
        waited <= LEASE_DURATION + RETRY_PERIOD.mul_f64(2.4),
        "took over a killed leader's lease after {waited:?}"
    );
    eventually(
        "the third leader reconciling",
        Duration::from_secs(30),
        || log.acts_by(&third.id) >= 2,
    )
    .await;
    let lease = server
        .list::<Lease>()
        .into_iter()
        .find(|lease| lease.metadata.name.as_deref() == Some(LEASE))
        .unwrap();
    let spec = lease.spec.unwrap();
    assert_eq!(spec.holder_identity.as_deref(), Some(third.id.as_str()));
    assert_eq!(
        spec.lease_transitions,
        Some(2),
        "three leaders, two transitions"
    );
    assert_eq!(spec.lease_duration_seconds, Some(15));

    // The killed manager's acts stopped with it; its leadership interval ends at the kill.
    log.push(Event::StoppedLeading(second.id.clone(), killed));
    log.check_no_two_leaders();
    stop_all(candidates).await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_leader_whose_lease_writes_fail_steps_down_by_its_renew_deadline() {
    if testkit::cluster::sim_only("virtual time: the renew deadline is asserted on the clock") {
        return;
    }
    let server = ApiServer::start().await.unwrap();
    server.create(&cm("work", "1")).unwrap();
    let log = Log::default();
    let mut candidates: Vec<Candidate> = ["a", "b", "c"]
        .iter()
        .map(|id| candidate(&server, id, &log))
        .collect();
    let first = one_leader(&candidates, &log).await;
    let first = candidates.remove(first);

    // Every lease write fails from now on.
    server.fail_next(FailRule::new("update", "leases", 500, u32::MAX));
    let failing_since = Instant::now();
    let result = first.running.await.unwrap();
    assert!(
        matches!(result, Err(Error::LeadershipLost)),
        "start returned {result:?}"
    );
    let stepped_down = log.stopped_leading(&first.id).unwrap();
    assert!(
        stepped_down - failing_since <= RENEW_DEADLINE,
        "the leader kept the lease {:?} after its writes started failing",
        stepped_down - failing_since
    );
    assert!(!first.manager.is_leader());
    let acts = log.acts_by(&first.id);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(log.acts_by(&first.id), acts, "the old leader still acts");
    // Nobody can write the lease: nobody leads.
    assert!(leaders(&candidates).is_empty());

    // Writes work again: a standby takes over once the lease expired in its eyes.
    server.clear_faults();
    eventually("a new leader", Duration::from_secs(60), || {
        leaders(&candidates).len() == 1
    })
    .await;
    let second = leaders(&candidates)[0].to_owned();
    eventually(
        "the new leader reconciling",
        Duration::from_secs(30),
        || log.acts_by(&second) >= 2,
    )
    .await;
    assert!(log.started_leading(&second).unwrap() >= stepped_down);
    log.check_no_two_leaders();
    stop_all(candidates).await;
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn warm_up_syncs_caches_before_leadership_and_state_is_observable() {
    let server = TestCluster::start().await.unwrap();
    server.create(&own_cm("work", "1")).await.unwrap();
    let elect = |id: &str| {
        LeaderElectionConfig::new(ns(), "warm")
            .identity(id)
            .retry_period(Duration::from_secs(2))
    };
    let leader = Arc::new(manager(&server).leader_election(elect("leader")).build());
    let warm = Arc::new(
        manager(&server)
            .leader_election(elect("warm"))
            .warm_up_before_leadership(true)
            .build(),
    );
    let cold = Arc::new(manager(&server).leader_election(elect("cold")).build());
    for manager in [&leader, &warm, &cold] {
        manager.cache().informers::<ConfigMap>().unwrap();
    }
    let new_leaders = Arc::new(Mutex::new(Vec::new()));
    let running_leader = spawn(&leader);
    eventually("the first manager leading", Duration::from_secs(30), || {
        leader.is_leader()
    })
    .await;
    let mut leader_state = warm.elector().unwrap().subscribe();
    let seen = new_leaders.clone();
    let watcher = tokio::spawn(async move {
        while leader_state.changed().await.is_ok() {
            let state = leader_state.borrow_and_update().clone();
            seen.lock().push(state);
        }
    });
    let running_warm = spawn(&warm);
    let running_cold = spawn(&cold);
    eventually("the warm standby's caches", Duration::from_secs(30), || {
        warm.has_synced()
    })
    .await;
    // Both standbys have read the Lease: they know who leads, and neither took over.
    eventually(
        "the standbys seeing the leader",
        Duration::from_secs(30),
        || {
            [&warm, &cold]
                .iter()
                .all(|standby| standby.elector().unwrap().leader().as_deref() == Some("leader"))
        },
    )
    .await;
    assert!(!warm.is_leader() && !cold.is_leader());
    assert!(!cold.has_synced(), "a cold standby caches nothing");
    assert!(
        new_leaders
            .lock()
            .iter()
            .any(|state| state.leader.as_deref() == Some("leader") && !state.is_leader)
    );

    leader.shutdown_handle().shutdown();
    running_leader.await.unwrap().unwrap();
    eventually("a standby leading", Duration::from_secs(30), || {
        warm.is_leader() || cold.is_leader()
    })
    .await;
    if cold.is_leader() {
        eventually("the cold standby's caches", Duration::from_secs(30), || {
            cold.has_synced()
        })
        .await;
    }
    warm.shutdown_handle().shutdown();
    cold.shutdown_handle().shutdown();
    running_warm.await.unwrap().unwrap();
    running_cold.await.unwrap().unwrap();
    watcher.abort();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn invalid_timings_fail_start() {
    let server = TestCluster::start().await.unwrap();
    let config = LeaderElectionConfig::new(ns(), "bad")
        .renew_deadline(Duration::from_secs(2))
        .retry_period(Duration::from_secs(2));
    let manager = manager(&server).leader_election(config).build();
    assert!(manager.elector().is_none());
    let error = manager.start().await.unwrap_err();
    assert!(matches!(error, Error::LeaderElection(_)), "{error}");
    assert!(error.to_string().contains("1.2"), "{error}");
    server.shutdown().await;
}

/// Shuts every remaining candidate down gracefully; each `start` must return `Ok`.
async fn stop_all(candidates: Vec<Candidate>) {
    for candidate in &candidates {
        candidate.manager.shutdown_handle().shutdown();
    }
    for candidate in candidates {
        candidate.running.await.unwrap().unwrap();
    }
}
