//! The scenarios: each sends a scripted sequence of requests in a namespace of its own and
//! records the answers (and facts derived from them) as probes.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::ctx::Ctx;
use crate::target::Target;

mod apply;
mod crd;
mod crud;
mod deployments;
mod discovery;
mod gc;
mod jobs;
mod lists;
pub mod merge_keys;
mod namespace_life;
mod namespaces;
mod not_found;
mod patches;
mod protobuf;
mod rbac;
mod subresources;
mod summary;
mod tables;
mod watch;
mod webhooks;

/// Every scenario, in run order.
pub const NAMES: &[&str] = &[
    "notfound",
    "crud",
    "lists",
    "watch",
    "subres",
    "apply",
    "patches",
    "tables",
    "discovery",
    "crd",
    "rbac",
    "webhooks",
    "nsdelete",
    "protobuf",
    "mergekeys",
    "gc",
    "deploy",
    "nslife",
    "jobs",
];

/// Scenarios whose answers depend on what kube-controller-manager, the scheduler and the nodes
/// do: they run against a simulator with its workload simulator and namespace defaults on.
/// Every scenario is recorded against a whole cluster (a kit cluster with one hollow node).
pub const CLUSTER: &[&str] = &["subres", "tables", "gc", "deploy", "nslife", "jobs"];

/// Scenarios whose answers are not recorded from a real server yet: they run only against
/// a live server (`KUBE_RT_TEST_KUBECONFIG`), compared with it live, and
/// `KUBE_RT_DIFF_RECORD=1` records them. Once `fixtures/<name>.json` exists, the name leaves
/// this list (the suite fails until it does).
pub const PENDING: &[&str] = &[];

async fn one(ctx: &mut Ctx<'_>) {
    match ctx.scenario {
        "notfound" => not_found::run(ctx).await,
        "crud" => crud::run(ctx).await,
        "lists" => lists::run(ctx).await,
        "watch" => watch::run(ctx).await,
        "subres" => subresources::run(ctx).await,
        "apply" => apply::run(ctx).await,
        "patches" => patches::run(ctx).await,
        "tables" => tables::run(ctx).await,
        "discovery" => discovery::run(ctx).await,
        "crd" => crd::run(ctx).await,
        "rbac" => rbac::run(ctx).await,
        "webhooks" => webhooks::run(ctx).await,
        "nsdelete" => namespaces::run(ctx).await,
        "protobuf" => protobuf::run(ctx).await,
        "mergekeys" => merge_keys::run(ctx).await,
        "gc" => gc::run(ctx).await,
        "deploy" => deployments::run(ctx).await,
        "nslife" => namespace_life::run(ctx).await,
        "jobs" => jobs::run(ctx).await,
        _ => {}
    }
}

/// Runs the `selected` scenarios against `target`: the probes and the transport errors.
pub async fn run(
    target: &Target,
    run: &str,
    selected: &[&str],
) -> (BTreeMap<String, Value>, Vec<String>) {
    let mut probes = BTreeMap::new();
    let mut errors = Vec::new();
    for name in NAMES.iter().filter(|n| selected.contains(n)) {
        let mut ctx = Ctx::new(target, run, name);
        one(&mut ctx).await;
        ctx.release().await;
        probes.append(&mut ctx.probes);
        errors.append(&mut ctx.errors);
    }
    (probes, errors)
}
