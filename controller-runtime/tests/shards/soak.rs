//! The soak: the ring under churn and chaos, its episodes, and the checks afterwards.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use apiserver_sim::ChaosConfig;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use tokio::time::Instant;

use crate::Settings;
use crate::checks::{self, ChangeMoves};
use crate::member::MemberSettings;
use crate::run::Run;
use crate::target::Target;
use crate::workload;

/// Each reconcile waits up to this long (a slow external call), on this many workers.
const WORK: Duration = Duration::from_millis(40);
const WORKERS: usize = 4;
/// How long the ring may take to settle after a change, under chaos: this, plus
/// [`SETTLE_PER_OBJECT`] for each ConfigMap (the sharder writes one label at a time, a few
/// dozen a second in a debug build on a loaded machine).
const SETTLE_LIMIT: Duration = Duration::from_secs(45);
const SETTLE_PER_OBJECT: Duration = Duration::from_millis(50);
/// How long convergence may take once chaos stopped.
const QUIESCE_LIMIT: Duration = Duration::from_secs(60);

/// What the chaos phase does besides the churn and the quick kills, in this order, each at its
/// fraction of the phase.
#[derive(Debug, Clone, Copy)]
enum Episode {
    /// Every Lease write fails until a shard gives its Lease up (and is restarted).
    LoseLeases,
    /// A new shard joins (objects drain to it).
    Add,
    /// A shard leaves gracefully (SIGTERM; its objects move at once).
    Remove,
    /// A shard is killed and kept down until the sharder takes its Lease over (its objects
    /// move), then restarted (they drain back).
    Takeover,
}

const EPISODES: [(f64, Episode); 4] = [
    (0.2, Episode::LoseLeases),
    (0.4, Episode::Add),
    (0.55, Episode::Remove),
    (0.7, Episode::Takeover),
];

/// What the chaos phase did.
#[derive(Default)]
struct Chaos {
    kills: Vec<String>,
    lease_losses: u32,
    added: Option<String>,
    removed: Option<String>,
    taken_over: Option<String>,
    /// How long the ring took to settle after each episode's change.
    settled: Vec<Duration>,
}

/// The soak on its own server (the simulator, in chaos mode unless the profile is `none`, or a
/// namespace of the real cluster); its summary line, or what failed.
pub async fn run(settings: Settings) -> Result<String, String> {
    let chaos = settings.profile.map(|profile| ChaosConfig {
        seed: settings.seed,
        profile,
    });
    let soak_settings = settings.clone();
    crate::with_target(&settings, "shards", chaos, |target| {
        soak(soak_settings, target)
    })
    .await
}

async fn soak(settings: Settings, target: Arc<Target>) -> Result<String, String> {
    let started = Instant::now();
    let member = MemberSettings {
        drain_handshake: true,
        work: WORK,
        fixed_work: false,
        workers: WORKERS,
    };
    let mut run = Run::start(target, settings.members, member).await?;
    run.seed(settings.objects).await?;
    let settle_limit = SETTLE_LIMIT + SETTLE_PER_OBJECT.mul_f64(settings.objects as f64);
    let assigned_in = run.wait_settled(true, settle_limit).await?;

    let chaos_started = Instant::now();
    let chaos_end = chaos_started + Duration::from_secs(settings.secs);
    let driver = {
        let cms: Api<ConfigMap> = Api::namespaced(run.target.client()?, run.target.namespace());
        tokio::spawn(workload::drive(
            cms,
            settings.seed,
            settings.objects,
            5..30,
            chaos_end,
        ))
    };
    let chaos = chaos_phase(&mut run, &settings, chaos_started, chaos_end).await?;
    let (driven_ok, driven) = driver.await.map_err(|e| format!("driver: {e}"))?;

    let (faults, fault_count) = run.target.stop_faults();
    let converged_in = run.wait_converged(QUIESCE_LIMIT).await?;
    let live = run.membership.live();
    let changes = run.membership.changes();
    let moves = run.labels.moves();
    let drains = run.labels.drains();
    let labels = run.labels.clone();
    let versions = labels.versions();
    let lease_losses = run.lease_losses;
    let incarnations = run.incarnations();
    let objects = run.target.objects().await?.0.len();
    let intervals = run.finish().await?;

    let overlaps = checks::overlaps(&intervals);
    if !overlaps.is_empty() {
        return Err(format!(
            "{} overlapping reconciles: {:#?}",
            overlaps.len(),
            &overlaps[..overlaps.len().min(20)]
        ));
    }
    let (labelled, foreign) = checks::foreign_versions(&intervals, &labels);
    if !foreign.is_empty() {
        return Err(format!(
            "{} reconciles of versions not labelled with their shard (of {labelled} checked): {:#?}",
            foreign.len(),
            &foreign[..foreign.len().min(20)]
        ));
    }
    let per_change = checks::moves_per_change(&changes, &moves);
    let over: Vec<&ChangeMoves> = per_change
        .iter()
        .filter(|c| c.moves as f64 > c.bound)
        .collect();
    if !over.is_empty() {
        return Err(format!(
            "more moves than 1.5 × objects ÷ shards: {}",
            list(&over)
        ));
    }
    exercised(
        &chaos,
        lease_losses,
        drains,
        &per_change,
        fault_count,
        settings.profile.is_some(),
    )?;
    let shards: BTreeSet<&str> = intervals
        .iter()
        .map(|r| crate::member::shard_of(&r.member))
        .collect();
    Ok(format!(
        "soak: {} objects at the start, {objects} at the end ({driven_ok}/{driven} driver writes \
         ok); shards {} at the start, {live:?} at the end, {incarnations} processes; {} \
         reconciles by {} shards, none overlapping, {labelled} checked against the label history; killed {:?}, {lease_losses} Leases lost, \
         added {:?}, removed {:?}, taken over {:?}; {} moves, {drains} drains, per change: {}; \
         initial assignment {assigned_in:?}, settled after changes in {:?}, converged \
         {converged_in:?} after chaos, {:?} in all; {versions} versions watched; {faults}",
        settings.objects,
        settings.members,
        intervals.len(),
        shards.len(),
        chaos.kills,
        chaos.added,
        chaos.removed,
        chaos.taken_over,
        moves.len(),
        list(&per_change.iter().collect::<Vec<_>>()),
        chaos.settled,
        started.elapsed(),
    ))
}

fn list(changes: &[&ChangeMoves]) -> String {
    changes
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// The run did what it is meant to: shards killed and restarted, Leases lost, a shard added,
/// one removed and one taken over, each moving objects, drains seen, faults injected (when
/// chaos is on).
fn exercised(
    chaos: &Chaos,
    lease_losses: u32,
    drains: usize,
    per_change: &[ChangeMoves],
    faults: u64,
    chaos_on: bool,
) -> Result<(), String> {
    if chaos.kills.is_empty() {
        return Err("no shard was killed".to_owned());
    }
    if lease_losses == 0 {
        return Err("no shard lost its Lease".to_owned());
    }
    if drains == 0 {
        return Err("no object was drained".to_owned());
    }
    for (what, shard) in [
        ("added", &chaos.added),
        ("removed", &chaos.removed),
        ("taken over", &chaos.taken_over),
    ] {
        let Some(shard) = shard else {
            return Err(format!("no shard was {what}"));
        };
        let moved = per_change.iter().any(|c| {
            c.moves > 0 && (c.change.before.contains(shard) != c.change.after.contains(shard))
        });
        if !moved {
            return Err(format!(
                "no object moved when {shard} was {what}: {}",
                list(&per_change.iter().collect::<Vec<_>>())
            ));
        }
    }
    if faults == 0 && chaos_on {
        return Err("no fault injected".to_owned());
    }
    Ok(())
}

/// Runs the chaos phase: quick kills at seeded moments until its end, and the episodes.
async fn chaos_phase(
    run: &mut Run,
    settings: &Settings,
    started: Instant,
    end: Instant,
) -> Result<Chaos, String> {
    let mut rng = fastrand::Rng::with_seed(settings.seed ^ 0x7368_6172);
    let mut chaos = Chaos::default();
    let phase = end - started;
    let mut episodes = EPISODES.iter().peekable();
    let mut next_kill = started + Duration::from_millis(rng.u64(3_000..8_000));
    while Instant::now() < end || episodes.peek().is_some() {
        run.restart_exited()?;
        let now = Instant::now();
        if let Some((_, episode)) = episodes.next_if(|(at, _)| now >= started + phase.mul_f64(*at))
        {
            let limit = SETTLE_LIMIT + SETTLE_PER_OBJECT.mul_f64(settings.objects as f64);
            episode_step(run, *episode, &mut rng, &mut chaos, settings.seed, limit).await?;
            next_kill = Instant::now() + Duration::from_millis(rng.u64(3_000..8_000));
        } else if now >= next_kill && now < end {
            let wanted: Vec<String> = run.wanted().into_iter().collect();
            let victim = &wanted[rng.usize(..wanted.len())];
            chaos.kills.push(run.kill(victim, false)?);
            next_kill = now + Duration::from_millis(rng.u64(3_000..8_000));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(chaos)
}

/// Runs one episode, and waits for the ring to settle after each change it makes.
async fn episode_step(
    run: &mut Run,
    episode: Episode,
    rng: &mut fastrand::Rng,
    chaos: &mut Chaos,
    seed: u64,
    settle_limit: Duration,
) -> Result<(), String> {
    let pick = |run: &Run, rng: &mut fastrand::Rng| {
        let wanted: Vec<String> = run.wanted().into_iter().collect();
        wanted[rng.usize(..wanted.len())].clone()
    };
    match episode {
        Episode::LoseLeases => {
            chaos.lease_losses += run.lose_leases(seed).await?;
            return Ok(());
        }
        Episode::Add => {
            let shard = format!("shard-{}", run.slots());
            run.add(&shard)?;
            chaos.added = Some(shard);
        }
        Episode::Remove => {
            // One of the shards that were there from the start.
            let mut shard = pick(run, rng);
            while Some(&shard) == chaos.added.as_ref() {
                shard = pick(run, rng);
            }
            run.remove(&shard).await?;
            chaos.removed = Some(shard);
        }
        Episode::Takeover => {
            let shard = pick(run, rng);
            run.kill(&shard, true)?;
            let wanted = run.wanted();
            run.wait_ring(&wanted).await?;
            chaos
                .settled
                .push(run.wait_settled(false, settle_limit).await?);
            run.restart(&shard)?;
            chaos.taken_over = Some(shard);
        }
    }
    let wanted = run.wanted();
    run.wait_ring(&wanted).await?;
    chaos
        .settled
        .push(run.wait_settled(false, settle_limit).await?);
    Ok(())
}
