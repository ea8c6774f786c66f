//! The negative run: the drain handshake off (`ShardingConfig::drain_handshake(false)`), the
//! sharder moves objects off live shards at once, and the overlap checker must report
//! reconciles of one object by two processes at once — proof that it can fail.
//!
//! Made deterministic rather than lucky: no chaos; every reconcile takes a second (a slow
//! external call) and each shard runs more workers than it has objects, while the parent
//! touches every object twice a second, so each object is being reconciled by its shard at
//! almost every moment. Then a fourth shard joins: the objects it takes are taken from
//! reconciles in flight, and it starts them at once.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::Settings;
use crate::checks;
use crate::member::MemberSettings;
use crate::run::Run;
use crate::target::Target;

const SHARDS: usize = 3;
const OBJECTS: usize = 120;
const WORK: Duration = Duration::from_secs(1);
const WORKERS: usize = 64;
const TOUCH_EVERY: Duration = Duration::from_millis(500);
const LIMIT: Duration = Duration::from_secs(30);

/// The run on its own server (the simulator without chaos, or a namespace of the real
/// cluster); its summary line, or what failed.
pub async fn run(settings: Settings) -> Result<String, String> {
    let seed = settings.seed;
    crate::with_target(&settings, "shards-negative", None, |target| {
        negative(seed, target)
    })
    .await
}

async fn negative(seed: u64, target: Arc<Target>) -> Result<String, String> {
    let started = Instant::now();
    let member = MemberSettings {
        drain_handshake: false,
        work: WORK,
        fixed_work: true,
        workers: WORKERS,
    };
    let mut run = Run::start(target, SHARDS, member).await?;
    run.seed(OBJECTS).await?;
    run.wait_settled(true, LIMIT).await?;

    let stop = CancellationToken::new();
    let toucher = {
        let cms: Api<ConfigMap> = Api::namespaced(run.target.client()?, run.target.namespace());
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut round = 0_u64;
            while !stop.is_cancelled() {
                round += 1;
                for i in 0..OBJECTS {
                    let patch = json!({"data": {"touched": format!("{seed}-{round}")}});
                    let _ = cms
                        .patch(
                            &format!("cm-{i}"),
                            &PatchParams::default(),
                            &Patch::Merge(patch),
                        )
                        .await;
                }
                tokio::time::sleep(TOUCH_EVERY).await;
            }
        })
    };
    // Every object in flight: as many reconciles begun since the touching started as objects.
    let busy_from = crate::members::journal::now_us();
    let deadline = Instant::now() + LIMIT;
    loop {
        let begun = run
            .intervals()?
            .iter()
            .filter(|r| r.start_us >= busy_from)
            .count();
        if begun >= OBJECTS {
            break;
        }
        if Instant::now() >= deadline {
            stop.cancel();
            return Err(format!(
                "negative run: only {begun} reconciles began {LIMIT:?} into the touching"
            ));
        }
        run.restart_exited()?;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    run.add(&format!("shard-{SHARDS}"))?;
    let wanted = run.wanted();
    run.wait_ring(&wanted).await?;
    let settled = run.wait_settled(true, LIMIT).await;
    stop.cancel();
    let _ = toucher.await;
    settled?;
    let moves = run.labels.moves().len();
    let intervals = run.finish().await?;
    let overlaps = checks::overlaps(&intervals);
    let Some(first) = overlaps.first() else {
        return Err(format!(
            "negative run: with the drain handshake off, {moves} objects moved off live shards \
             and the checker found no overlapping reconciles among {}: it cannot fail",
            intervals.len()
        ));
    };
    Ok(format!(
        "negative (drain handshake off, {OBJECTS} objects, {SHARDS}+1 shards): {moves} moves, \
         {} overlapping reconciles found among {} (first: {first}), {:?}",
        overlaps.len(),
        intervals.len(),
        started.elapsed()
    ))
}
