//! [`Run`]: the ring of shard processes the parent drives, with what it observes of them: start
//! shards, kill, restart, add and remove them, make their Leases fail, and wait, by polling
//! with a deadline, for the ring to settle.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use controller_runtime::sharding::ShardLease;
use informer::InformerFactory;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::checks;
use crate::member::{MemberSettings, PREFIX, RENEW_DEADLINE, RING};
use crate::members::journal::Interval;
use crate::members::slot::{Slot, all_intervals};
use crate::members::{FAILED_EXIT, LOST_LEASE_EXIT};
use crate::observe::{Labels, Membership};
use crate::target::Target;

/// How long a graceful shutdown, a Lease loss or a ring change may take on a loaded machine.
const STEP_LIMIT: Duration = Duration::from_secs(30);

/// A shard slot and whether the parent wants it running.
struct Member {
    slot: Slot,
    /// Stopped for good (removed from the ring) or for now (killed, restarted later).
    down: bool,
}

/// The shard processes of one soak and the parent's observers.
pub struct Run {
    pub target: Arc<Target>,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    settings: MemberSettings,
    members: Vec<Member>,
    pub labels: Labels,
    label_watch: InformerFactory,
    pub membership: Membership,
    stop_recording: CancellationToken,
    recording: JoinHandle<()>,
    /// Incarnations that exited because they lost their shard Lease.
    pub lease_losses: u32,
}

impl Run {
    /// Starts observing `target` and `shards` shard processes (`shard-0` …), and waits until
    /// all of them are on the ring.
    pub async fn start(
        target: Arc<Target>,
        shards: usize,
        settings: MemberSettings,
    ) -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
        let kubeconfig = target.members_kubeconfig().to_owned();
        let labels = Labels::default();
        let label_watch = labels.watch(target.client()?, target.namespace())?;
        let membership = Membership::default();
        let stop_recording = CancellationToken::new();
        let recording = tokio::spawn(
            membership
                .clone()
                .record(Arc::clone(&target), stop_recording.clone()),
        );
        let mut run = Self {
            target,
            dir,
            kubeconfig,
            settings,
            members: Vec::new(),
            labels,
            label_watch,
            membership,
            stop_recording,
            recording,
            lease_losses: 0,
        };
        for i in 0..shards {
            run.add(&format!("shard-{i}"))?;
        }
        let all = run.wanted();
        run.wait_ring(&all).await?;
        run.wait_marked(&all).await?;
        Ok(run)
    }

    /// Waits until the sharder has marked every shard of `want` as given its share: until
    /// then its ring may still lack one, and objects seeded meanwhile would be placed by the
    /// smaller ring and moved at once (counted against the start's membership change).
    async fn wait_marked(&mut self, want: &BTreeSet<String>) -> Result<(), String> {
        let deadline = Instant::now() + STEP_LIMIT;
        loop {
            let marked: BTreeSet<String> = self
                .target
                .leases()
                .await
                .unwrap_or_default()
                .iter()
                .filter_map(ShardLease::from_lease)
                .filter(|lease| lease.ring() == Some(RING) && lease.is_assigned())
                .map(|lease| lease.shard().as_str().to_owned())
                .collect();
            if want.is_subset(&marked) {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "the sharder marked {marked:?}, not all of {want:?}, {STEP_LIMIT:?} on"
                ));
            }
            self.restart_exited()?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Starts a new shard process named `shard`.
    pub fn add(&mut self, shard: &str) -> Result<(), String> {
        let mut slot = Slot::new(PREFIX, shard.to_owned(), self.dir.path(), &self.kubeconfig);
        for (name, value) in self.settings.vars(self.target.namespace()) {
            slot = slot.with_env(name, value);
        }
        slot.start()?;
        self.members.push(Member { slot, down: false });
        Ok(())
    }

    /// Shards started so far (running or not): the next new shard is `shard-<slots>`.
    pub fn slots(&self) -> usize {
        self.members.len()
    }

    /// The shards the parent wants running.
    pub fn wanted(&self) -> BTreeSet<String> {
        self.members
            .iter()
            .filter(|m| !m.down)
            .map(|m| m.slot.name().to_owned())
            .collect()
    }

    fn member(&mut self, shard: &str) -> Result<&mut Member, String> {
        self.members
            .iter_mut()
            .find(|m| m.slot.name() == shard)
            .ok_or_else(|| format!("no shard {shard}"))
    }

    /// Restarts the shards that exited after losing their Lease; any other exit of a shard
    /// that should run is a failure.
    pub fn restart_exited(&mut self) -> Result<(), String> {
        for member in &mut self.members {
            let Some(code) = member.slot.exited()? else {
                continue;
            };
            if member.down {
                continue;
            }
            if code != LOST_LEASE_EXIT {
                return Err(format!(
                    "shard {} exited with {code}{}",
                    member.slot.identity(),
                    if code == FAILED_EXIT {
                        " (its stderr tells why)"
                    } else {
                        ""
                    }
                ));
            }
            self.lease_losses += 1;
            member.slot.start()?;
        }
        Ok(())
    }

    /// Kills `shard` with SIGKILL; restarts it at once unless `keep_down`. Its identity.
    pub fn kill(&mut self, shard: &str, keep_down: bool) -> Result<String, String> {
        let member = self.member(shard)?;
        let identity = member.slot.kill()?;
        if keep_down {
            member.down = true;
        } else {
            member.slot.start()?;
        }
        Ok(identity)
    }

    /// Starts `shard` again after [`kill`](Self::kill) kept it down.
    pub fn restart(&mut self, shard: &str) -> Result<(), String> {
        let member = self.member(shard)?;
        member.down = false;
        member.slot.start()
    }

    /// Stops `shard` gracefully (SIGTERM: it finishes its reconciles and releases its Lease)
    /// and waits for it to exit 0.
    pub async fn remove(&mut self, shard: &str) -> Result<(), String> {
        let member = self.member(shard)?;
        member.down = true;
        member.slot.terminate()?;
        let deadline = Instant::now() + STEP_LIMIT;
        loop {
            let member = self.member(shard)?;
            match member.slot.exited()? {
                Some(0) => return Ok(()),
                Some(code) => return Err(format!("{shard} exited with {code} after SIGTERM")),
                None if Instant::now() >= deadline => {
                    return Err(format!("{shard} still runs {STEP_LIMIT:?} after SIGTERM"));
                }
                None => {}
            }
            self.restart_exited()?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Fails every Lease write in the shards' namespace until a shard gave up its Lease and
    /// exited (then the writes work again and it is restarted); the shards that lost theirs.
    pub async fn lose_leases(&mut self, seed: u64) -> Result<u32, String> {
        let before = self.lease_losses;
        self.target.fail_lease_writes(seed).await?;
        let deadline = Instant::now() + STEP_LIMIT;
        let mut outcome = Ok(());
        while self.lease_losses == before {
            if Instant::now() >= deadline {
                outcome = Err(format!(
                    "no shard gave up its Lease {STEP_LIMIT:?} after its writes began to fail \
                     (renew deadline {RENEW_DEADLINE:?})"
                ));
                break;
            }
            if let Err(e) = self.restart_exited() {
                outcome = Err(e);
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.target.restore_lease_writes().await?;
        outcome.map(|()| self.lease_losses - before)
    }

    /// Waits until the ring (as the Leases show it) is `want`.
    pub async fn wait_ring(&mut self, want: &BTreeSet<String>) -> Result<(), String> {
        let deadline = Instant::now() + STEP_LIMIT;
        while &self.membership.live() != want {
            if Instant::now() >= deadline {
                return Err(format!(
                    "the ring is {:?}, not {want:?}, {STEP_LIMIT:?} on",
                    self.membership.live()
                ));
            }
            self.restart_exited()?;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Ok(())
    }

    /// Waits until every labelled object is where the ring wants it (every object, when
    /// `complete`); how long that took.
    pub async fn wait_settled(
        &mut self,
        complete: bool,
        limit: Duration,
    ) -> Result<Duration, String> {
        let started = Instant::now();
        loop {
            self.restart_exited()?;
            let (cms, secrets) = self.target.objects().await?;
            let gaps = checks::assignment_gaps(&self.membership.live(), &cms, &secrets, complete);
            if gaps.is_empty() {
                return Ok(started.elapsed());
            }
            if started.elapsed() >= limit {
                return Err(format!(
                    "the ring {:?} did not settle in {limit:?}: {} gaps, first {:?}",
                    self.membership.live(),
                    gaps.len(),
                    &gaps[..gaps.len().min(5)]
                ));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Waits until every object is assigned and reconciled at its final version by its
    /// shard, and mirrored; how long that took.
    pub async fn wait_converged(&mut self, limit: Duration) -> Result<Duration, String> {
        let started = Instant::now();
        loop {
            self.restart_exited()?;
            let (cms, secrets) = self.target.objects().await?;
            let mut gaps = checks::assignment_gaps(&self.membership.live(), &cms, &secrets, true);
            if gaps.is_empty() {
                gaps = checks::work_gaps(&cms, &secrets, &self.intervals()?);
            }
            if gaps.is_empty() {
                return Ok(started.elapsed());
            }
            if started.elapsed() >= limit {
                return Err(format!(
                    "not converged {limit:?} after chaos: {} gaps, first {:?}",
                    gaps.len(),
                    &gaps[..gaps.len().min(5)]
                ));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// Creates `count` ConfigMaps `cm-0` … on the server, unlabelled.
    pub async fn seed(&self, count: usize) -> Result<(), String> {
        self.target.seed(count).await
    }

    /// Every reconcile journaled so far.
    pub fn intervals(&self) -> Result<Vec<Interval>, String> {
        let slots: Vec<&Slot> = self.members.iter().map(|m| &m.slot).collect();
        all_intervals(slots)
    }

    /// Process starts, over all shards.
    pub fn incarnations(&self) -> u32 {
        self.members.iter().map(|m| m.slot.incarnations()).sum()
    }

    /// Kills every shard and stops observing (the target is no longer shared); every
    /// reconcile journaled.
    pub async fn finish(mut self) -> Result<Vec<Interval>, String> {
        for member in &mut self.members {
            member.down = true;
            member.slot.kill()?;
        }
        self.stop_recording.cancel();
        let _ = (&mut self.recording).await;
        self.label_watch.shutdown().await;
        self.intervals()
    }
}

impl Drop for Run {
    /// A run that failed before [`finish`](Run::finish) stops its observer too, so that the
    /// target is no longer shared and the caller can clean it up.
    fn drop(&mut self) {
        self.stop_recording.cancel();
    }
}
