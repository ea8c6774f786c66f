//! The workload every soak runs: two controllers that feed each other and a driver that churns
//! their input.
//!
//! - `mirror` (ConfigMap → a Secret of the same name holding the same data, with a controller
//!   reference to the ConfigMap; it `owns(Watch::of::<Secret>())`, so every Secret write comes
//!   back to it);
//! - `stamp` (Secret → an annotation listing the Secret's data keys; its patch is a Secret
//!   write, which `mirror` sees through `owns`, and which must not make `mirror` write again);
//! - the driver: random creates, merge-patch updates and deletes of a fixed set of ConfigMap
//!   names over HTTP.
//!
//! The reconcile bodies live here so the soaks only add their own bookkeeping around them.

#![allow(dead_code)]

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::time::Duration;

use controller_runtime::{
    controller::{Action, Context, ReconcileError, Request},
    util::{create_or_update, set_controller_reference},
};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{Resource, ResourceExt};
use serde_json::json;

/// The annotation `stamp` keeps on every Secret: its data keys, sorted, comma-separated.
pub const KEYS_ANNOTATION: &str = "soak.example.com/keys";

/// The Secret data `mirror` derives from a ConfigMap.
pub fn mirrored_data(config: &ConfigMap) -> BTreeMap<String, ByteString> {
    config
        .data
        .iter()
        .flatten()
        .map(|(k, v)| (k.clone(), ByteString(v.clone().into_bytes())))
        .collect()
}

/// The value of [`KEYS_ANNOTATION`] a Secret should carry.
pub fn data_keys(secret: &Secret) -> String {
    let keys: Vec<&str> = secret
        .data
        .iter()
        .flatten()
        .map(|(k, _)| k.as_str())
        .collect();
    keys.join(",")
}

/// `mirror`'s reconcile: makes the Secret of `config`'s name hold its data, controlled by it.
/// Nothing to do for a ConfigMap that is gone (the Secret's owner reference lets the garbage
/// collector remove it).
///
/// Before it creates a Secret (none in the Secret cache), it confirms with a live read that
/// the ConfigMap still exists with the uid the cache has. The ConfigMap and Secret caches are
/// fed by separate watches and one can lag the other by seconds under faults: a ConfigMap
/// deleted on the server but still in a stale cache would otherwise get its Secret back, the
/// garbage collector would delete it (its owner is gone), the Secret's delete event would
/// trigger `mirror` again, and so on as fast as the server answers: a write loop between the
/// controller and the garbage collector for as long as the cache lags. A live read only on
/// the create path costs one request per creation, and none on the steady path.
pub async fn mirror(req: &Request, ctx: &Context<ConfigMap>) -> Result<Action, ReconcileError> {
    let Some(config) = ctx.get() else {
        return Ok(Action::done());
    };
    let namespace = config.namespace().unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(ctx.client().clone(), &namespace);
    if ctx.cache().get::<Secret>(&req.key)?.is_none() {
        let live = ctx.api().get_opt(&config.name_any()).await?;
        if live.and_then(|live| live.metadata.uid) != config.metadata.uid {
            // Deleted (or replaced) on the server: its delete or add event is on its way to
            // the cache and reconciles the key again.
            return Ok(Action::done());
        }
    }
    let data = mirrored_data(&config);
    let mut owner_error = None;
    create_or_update(&secrets, &config.name_any(), |secret| {
        secret.data = Some(data);
        owner_error = set_controller_reference(config.as_ref(), secret).err();
    })
    .await?;
    match owner_error {
        Some(e) => Err(ReconcileError::terminal(e)),
        None => Ok(Action::done()),
    }
}

/// `stamp`'s reconcile: sets [`KEYS_ANNOTATION`] when it is not already right.
pub async fn stamp(ctx: &Context<Secret>) -> Result<Action, ReconcileError> {
    let Some(secret) = ctx.get() else {
        return Ok(Action::done());
    };
    let keys = data_keys(&secret);
    if secret.annotations().get(KEYS_ANNOTATION) == Some(&keys) {
        return Ok(Action::done());
    }
    let patch = json!({"metadata": {"annotations": {KEYS_ANNOTATION: keys}}});
    ctx.patch(&PatchParams::default(), &Patch::Merge(patch))
        .await?;
    Ok(Action::done())
}

/// The driver's next operation, drawn from `rng`: a create, a merge-patch update or a delete of
/// one of `names` ConfigMaps (`cm-0` …). True when the server accepted it within 5 s; creates
/// of an existing name and deletes of a missing one are refused, as they would be anywhere.
pub async fn random_write(cms: &Api<ConfigMap>, rng: &mut fastrand::Rng, names: usize) -> bool {
    let name = format!("cm-{}", rng.usize(..names));
    let value = rng.u32(..1000).to_string();
    let key = format!("k{}", rng.u8(..3));
    let op = async {
        match rng.u8(..10) {
            0..=3 => {
                let mut cm = ConfigMap::default();
                cm.metadata.name = Some(name.clone());
                cm.data = Some([(key, value)].into());
                cms.create(&PostParams::default(), &cm).await.map(drop)
            }
            4..=7 => {
                let patch = json!({"data": {key: value}});
                cms.patch(&name, &PatchParams::default(), &Patch::Merge(patch))
                    .await
                    .map(drop)
            }
            _ => cms.delete(&name, &DeleteParams::default()).await.map(drop),
        }
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(5), op).await,
        Ok(Ok(()))
    )
}

/// Drives [`random_write`]s of `names` ConfigMaps, each followed by a pause drawn from
/// `pause_ms`, until `end`; how many the server accepted, and how many were sent.
pub async fn drive(
    cms: Api<ConfigMap>,
    seed: u64,
    names: usize,
    pause_ms: std::ops::Range<u64>,
    end: tokio::time::Instant,
) -> (u64, u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let (mut sent, mut ok) = (0_u64, 0_u64);
    while tokio::time::Instant::now() < end {
        sent += 1;
        ok += u64::from(random_write(&cms, &mut rng, names).await);
        tokio::time::sleep(Duration::from_millis(rng.u64(pause_ms.clone()))).await;
    }
    (ok, sent)
}

/// name → resourceVersion.
pub fn versions<K: Resource>(
    objs: impl IntoIterator<Item = impl Borrow<K>>,
) -> BTreeMap<String, String> {
    objs.into_iter()
        .map(|o| {
            let o = o.borrow();
            (
                o.meta().name.clone().unwrap_or_default(),
                o.meta().resource_version.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// What `mirror` and `stamp` leave undone on the server: ConfigMaps without their Secret (or
/// with different data), Secrets without their annotation. Empty once they caught up.
pub fn unfinished(cms: &[ConfigMap], secrets: &[Secret]) -> Vec<String> {
    let mut gaps = unmirrored(cms, secrets);
    for cm in cms {
        let name = cm.name_any();
        let secret = secrets.iter().find(|s| s.name_any() == name);
        if let Some(s) = secret
            && s.data.clone().unwrap_or_default() == mirrored_data(cm)
            && s.annotations().get(KEYS_ANNOTATION) != Some(&data_keys(s))
        {
            gaps.push(format!("secret {name} is not stamped"));
        }
    }
    gaps
}

/// What `mirror` leaves undone on the server: ConfigMaps without their Secret, or with one
/// holding different data. Empty once it caught up.
pub fn unmirrored(cms: &[ConfigMap], secrets: &[Secret]) -> Vec<String> {
    let by_name: BTreeMap<String, &Secret> = secrets.iter().map(|s| (s.name_any(), s)).collect();
    let mut gaps = Vec::new();
    for cm in cms {
        let name = cm.name_any();
        match by_name.get(&name) {
            Some(s) if s.data.clone().unwrap_or_default() == mirrored_data(cm) => {}
            other => gaps.push(format!(
                "{name} is not mirrored: {:?}",
                other.map(|s| &s.data)
            )),
        }
    }
    gaps
}
