//! The shard Lease against the in-process API server: a member acquires, renews and releases
//! its Lease, takes it back after a restart or once the sharder's hold runs out, and stops
//! holding it by the renew deadline when writes fail; the sharder takes over only uncertain
//! shards, and only if nothing wrote the Lease since it was read. Paused tokio time: the Lease
//! timings are simulated, only the timestamps written come from the wall clock.

use std::time::Duration;

use apiserver_sim::{ApiServer, FailRule};
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::ops::metrics::{InformerSet, Metrics};
use crate::sharding::{
    MemberEnd, RING_LABEL, ShardLease, ShardMember, ShardName, ShardState, ShardingConfig,
    Takeover, take_over_uncertain_shard,
};

const NAMESPACE: &str = "default";
const LEASE_DURATION: Duration = Duration::from_secs(15);

fn config(shard: &str) -> ShardingConfig {
    ShardingConfig::new("web", NAMESPACE).shard(shard)
}

fn leases(client: &Client) -> Api<Lease> {
    Api::namespaced(client.clone(), NAMESPACE)
}

async fn shard_lease(client: &Client, shard: &str) -> Option<ShardLease> {
    let lease = leases(client).get_opt(shard).await.ok().flatten()?;
    ShardLease::from_lease(&lease)
}

async fn state(client: &Client, shard: &str) -> Option<ShardState> {
    Some(shard_lease(client, shard).await?.state(Timestamp::now()))
}

/// Creates `shard`'s Lease held by `holder`, renewed `ago` before now.
async fn put_lease(client: &Client, shard: &str, holder: &str, ago: Duration) {
    let renewed = Timestamp::now() - SignedDuration::try_from(ago).unwrap_or_default();
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some(shard.to_owned()),
            labels: Some([(RING_LABEL.to_owned(), "web".to_owned())].into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.to_owned()),
            lease_duration_seconds: Some(LEASE_DURATION.as_secs() as i32),
            acquire_time: Some(MicroTime(renewed)),
            renew_time: Some(MicroTime(renewed)),
            lease_transitions: Some(0),
            ..LeaseSpec::default()
        }),
    };
    leases(client)
        .create(&PostParams::default(), &lease)
        .await
        .unwrap();
}

fn start(member: &ShardMember) -> (CancellationToken, JoinHandle<MemberEnd>) {
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (member, stop) = (member.clone(), stop.clone());
        async move { member.run(stop).await }
    });
    (stop, task)
}

async fn server_and_member(shard: &str) -> (ApiServer, Client, ShardMember) {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    let metrics = Metrics::new(InformerSet::default());
    let member = ShardMember::new(client.clone(), &config(shard), &metrics).unwrap();
    (server, client, member)
}

async fn held(member: &ShardMember) {
    testkit::eventually("the shard Lease held", Duration::from_secs(60), || {
        member.is_held()
    })
    .await;
}

#[tokio::test(start_paused = true)]
async fn a_member_acquires_renews_and_releases_its_lease() {
    let (server, client, member) = server_and_member("shard-0").await;
    assert_eq!((member.ring(), member.shard().as_str()), ("web", "shard-0"));
    assert!(!member.is_held());
    let (stop, task) = start(&member);
    held(&member).await;
    let lease = shard_lease(&client, "shard-0").await.unwrap();
    assert_eq!(lease.ring(), Some("web"));
    assert_eq!(lease.holder(), Some("shard-0"));
    assert_eq!(lease.duration(), Some(LEASE_DURATION));
    assert_eq!(state(&client, "shard-0").await, Some(ShardState::Ready));

    let version = |lease: Option<Lease>| lease.and_then(|lease| lease.metadata.resource_version);
    let first = version(leases(&client).get_opt("shard-0").await.unwrap());
    testkit::eventually_async("a renewal", Duration::from_secs(30), || async {
        version(leases(&client).get_opt("shard-0").await.unwrap()) != first
    })
    .await;
    assert!(member.is_held());

    stop.cancel();
    assert_eq!(task.await.unwrap(), MemberEnd::ShutDown);
    assert!(!member.is_held());
    let released = shard_lease(&client, "shard-0").await.unwrap();
    assert_eq!(released.holder(), None);
    assert_eq!(
        released.ring(),
        Some("web"),
        "the release keeps the ring label"
    );
    assert_eq!(state(&client, "shard-0").await, Some(ShardState::Dead));
    server.shutdown().await;
}

/// A restarted replica (same shard name) takes its Lease back at once, however fresh it is.
#[tokio::test(start_paused = true)]
async fn a_restarted_member_takes_its_own_lease_back_at_once() {
    let (server, client, member) = server_and_member("shard-0").await;
    put_lease(&client, "shard-0", "shard-0", Duration::from_secs(1)).await;
    let before = tokio::time::Instant::now();
    let (stop, task) = start(&member);
    held(&member).await;
    assert!(before.elapsed() < LEASE_DURATION);
    stop.cancel();
    assert_eq!(task.await.unwrap(), MemberEnd::ShutDown);
    server.shutdown().await;
}

/// After the sharder declared the shard dead, the shard waits out the sharder's hold (a lease
/// duration without change, in its own eyes) before it takes its Lease back.
#[tokio::test(start_paused = true)]
async fn a_member_waits_out_the_sharders_hold() {
    let (server, client, member) = server_and_member("shard-0").await;
    put_lease(&client, "shard-0", "sharder", Duration::ZERO).await;
    let (stop, task) = start(&member);
    tokio::time::sleep(LEASE_DURATION - Duration::from_secs(3)).await;
    assert!(
        !member.is_held(),
        "took the Lease while the sharder held it"
    );
    assert_eq!(state(&client, "shard-0").await, Some(ShardState::Dead));
    held(&member).await;
    let lease = shard_lease(&client, "shard-0").await.unwrap();
    assert_eq!(lease.holder(), Some("shard-0"));
    assert_eq!(state(&client, "shard-0").await, Some(ShardState::Ready));
    stop.cancel();
    task.await.unwrap();
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_member_whose_writes_fail_lets_go_by_its_renew_deadline() {
    let (server, _client, member) = server_and_member("shard-0").await;
    let (_stop, task) = start(&member);
    held(&member).await;
    server.fail_next(FailRule::new("update", "leases", 500, u32::MAX));
    let failing_since = tokio::time::Instant::now();
    assert_eq!(task.await.unwrap(), MemberEnd::LeaseLost);
    assert!(!member.is_held());
    assert!(failing_since.elapsed() <= Duration::from_secs(10) + Duration::from_secs(2));
    server.shutdown().await;
}

#[tokio::test]
async fn a_member_refuses_invalid_settings() {
    let server = ApiServer::start().await.unwrap();
    let metrics = Metrics::new(InformerSet::default());
    let member = ShardMember::new(server.client().unwrap(), &config("Shard_0"), &metrics);
    assert!(member.is_err_and(|error| error.to_string().contains("\"Shard_0\"")));
    server.shutdown().await;
}

#[tokio::test]
async fn the_sharder_takes_over_only_uncertain_shards() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    put_lease(&client, "ready", "ready", Duration::from_secs(1)).await;
    put_lease(&client, "expired", "expired", Duration::from_secs(20)).await;
    put_lease(&client, "silent", "silent", Duration::from_secs(31)).await;
    let take = |shard: &'static str| {
        let client = client.clone();
        async move {
            take_over_uncertain_shard(client, NAMESPACE, &ShardName::from(shard), "sharder").await
        }
    };
    for (shard, state) in [
        ("ready", ShardState::Ready),
        ("expired", ShardState::Expired),
    ] {
        assert_eq!(
            take(shard).await.unwrap(),
            Takeover::NotUncertain(state),
            "{shard}"
        );
        assert_eq!(
            shard_lease(&client, shard).await.unwrap().holder(),
            Some(shard)
        );
    }
    assert_eq!(take("missing").await.unwrap(), Takeover::Gone);

    assert_eq!(take("silent").await.unwrap(), Takeover::Acquired);
    let taken = shard_lease(&client, "silent").await.unwrap();
    assert_eq!(taken.holder(), Some("sharder"));
    assert_eq!(taken.duration(), Some(2 * LEASE_DURATION));
    assert_eq!(taken.ring(), Some("web"));
    assert_eq!(state(&client, "silent").await, Some(ShardState::Dead));
    assert_eq!(
        take("silent").await.unwrap(),
        Takeover::NotUncertain(ShardState::Dead)
    );
    server.shutdown().await;
}

/// A write between the sharder's read and its write (the shard renewing) makes it a conflict,
/// not a takeover; a failing server is an error naming the Lease.
#[tokio::test]
async fn the_sharder_backs_off_on_a_conflict_and_reports_failures() {
    let server = ApiServer::start().await.unwrap();
    let client = server.client().unwrap();
    put_lease(&client, "silent", "silent", Duration::from_secs(60)).await;
    let shard = ShardName::from("silent");
    server.fail_next(FailRule::new("update", "leases", 409, 1));
    let taken = take_over_uncertain_shard(client.clone(), NAMESPACE, &shard, "sharder").await;
    assert_eq!(taken.unwrap(), Takeover::Conflict);
    assert_eq!(
        shard_lease(&client, "silent").await.unwrap().holder(),
        Some("silent")
    );

    server.fail_next(FailRule::new("get", "leases", 500, 1));
    let failed = take_over_uncertain_shard(client, NAMESPACE, &shard, "sharder").await;
    assert!(failed.is_err_and(|error| {
        error
            .to_string()
            .contains("read the shard Lease default/silent")
    }));
    server.shutdown().await;
}

#[tokio::test(start_paused = true)]
async fn a_member_is_assigned_once_the_mark_names_its_current_holding() {
    use crate::sharding::ASSIGNED_ANNOTATION;
    use kube::api::{Patch, PatchParams};

    let (server, client, member) = server_and_member("shard-0").await;
    let (stop, task) = start(&member);
    held(&member).await;
    let watch = tokio::spawn({
        let (member, stop) = (member.clone(), stop.clone());
        async move { member.watch_assignment(stop).await }
    });
    let mark = |value: String| {
        let patch = serde_json::json!({"metadata": {"annotations": {ASSIGNED_ANNOTATION: value}}});
        let leases = leases(&client);
        async move {
            leases
                .patch("shard-0", &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .unwrap();
        }
    };
    // A mark of an earlier holding does not count.
    mark("2020-01-01T00:00:00Z".to_owned()).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(!member.is_assigned());
    assert!(!shard_lease(&client, "shard-0").await.unwrap().is_assigned());
    // The mark of this holding's acquisition does; renewals keep it.
    let acquired = shard_lease(&client, "shard-0").await.unwrap();
    mark(acquired.acquired().unwrap().to_owned()).await;
    testkit::eventually("assigned", Duration::from_secs(30), || member.is_assigned()).await;
    watch.await.unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(shard_lease(&client, "shard-0").await.unwrap().is_assigned());
    assert!(member.is_held());

    stop.cancel();
    assert_eq!(task.await.unwrap(), MemberEnd::ShutDown);
    assert!(
        !member.is_assigned(),
        "not assigned once the Lease is released"
    );
    server.shutdown().await;
}
