//! The caches one `run` measures ([`PeerName`]), and running the measurement of one.

use anyhow::Result;
use clap::ValueEnum;
use tokio::runtime::Runtime;

use crate::measure::{self, RunFigures, RunOptions};
use crate::{kube_runtime, lean, metadata_peers, ours, ours_compact};

/// A cache a `run` measures (`--peer`).
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PeerName {
    /// Our informer of typed Pods.
    Ours,
    /// Our informer of compact Pods.
    OursCompact,
    /// kube-runtime's watcher and reflector store.
    KubeRuntime,
    /// Our metadata-only informer.
    OursMetadata,
    /// kube-runtime's metadata watcher.
    KubeRuntimeMetadata,
    /// Our informer of a lean projection of Pods.
    OursLean,
}

/// One measurement of `peer` with `options`, on `runtime`.
pub fn run(peer: PeerName, options: RunOptions, runtime: &Runtime) -> Result<RunFigures> {
    match peer {
        PeerName::Ours => runtime.block_on(measure::run::<ours::Ours>(options)),
        PeerName::OursCompact => {
            runtime.block_on(measure::run::<ours_compact::OursCompact>(options))
        }
        PeerName::KubeRuntime => {
            runtime.block_on(measure::run::<kube_runtime::KubeRuntime>(options))
        }
        PeerName::OursMetadata => {
            runtime.block_on(measure::run::<metadata_peers::OursMetadata>(options))
        }
        PeerName::KubeRuntimeMetadata => {
            runtime.block_on(measure::run::<metadata_peers::KubeRuntimeMetadata>(options))
        }
        PeerName::OursLean => runtime.block_on(measure::run::<lean::OursLean>(options)),
    }
}
