//! The sharding benchmark's objects in the in-process apiserver-sim: the ConfigMaps (created and
//! touched straight in its store, so the measuring process spends next to nothing on them while
//! the shards' watches still receive every change over HTTP), and where the ring has put them.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result, bail};
use apiserver_sim::ApiServer;
use controller_runtime::sharding::{Ring, ShardName, drain_label, ring_key, shard_label};
use serde_json::{Value, json};

use crate::shards::child::{NAMESPACE, RING};
use crate::shards::status::ROUND_ANNOTATION;

/// The measured objects' names start with this.
const PREFIX: &str = "bench-";
/// Data keys per ConfigMap (the data bytes are spread over them).
const DATA_KEYS: usize = 4;

/// The name of the `index`th object.
fn name(index: usize) -> String {
    format!("{PREFIX}{index:05}")
}

/// Creates `objects` ConfigMaps of about `data_bytes` bytes of data each.
pub fn create(server: &ApiServer, objects: usize, data_bytes: usize) -> Result<()> {
    let value = "x".repeat(data_bytes / DATA_KEYS);
    let configmaps = (0..objects).map(|index| {
        let data: serde_json::Map<String, Value> = (0..DATA_KEYS)
            .map(|key| (format!("key-{key}"), Value::String(value.clone())))
            .collect();
        json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {
                "name": name(index),
                "namespace": NAMESPACE,
                "labels": { "app": "shards-bench" },
            },
            "data": data,
        })
    });
    server
        .create_many(configmaps)
        .context("creating the ConfigMaps")?;
    Ok(())
}

/// Starts `round`: sets the round annotation on every measured object, each write conditional
/// on the version read (the ring is settled, so nothing else writes them meanwhile). Returns
/// how many objects were touched.
pub fn touch(server: &ApiServer, round: u32) -> Result<usize> {
    let mut touched = Vec::new();
    for mut object in server.objects("", "configmaps") {
        if !object_name(&object).is_some_and(|name| name.starts_with(PREFIX)) {
            continue;
        }
        let annotations = object
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .context("a ConfigMap without metadata")?
            .entry("annotations")
            .or_insert_with(|| json!({}));
        let Some(annotations) = annotations.as_object_mut() else {
            bail!("a ConfigMap's annotations are not an object");
        };
        annotations.insert(ROUND_ANNOTATION.into(), Value::String(round.to_string()));
        touched.push(object);
    }
    let count = touched.len();
    server
        .replace_many(touched)
        .with_context(|| format!("touching the ConfigMaps for round {round}"))?;
    Ok(count)
}

fn object_name(object: &Value) -> Option<&str> {
    object.pointer("/metadata/name")?.as_str()
}

/// Where the objects are, as the server stores them, against where the ring wants them.
#[derive(Debug, Default)]
pub struct Placement {
    /// The measured objects each shard holds by label (names).
    pub measured: BTreeMap<String, BTreeSet<String>>,
    /// Every ConfigMap each shard holds by label (what its cache should hold).
    pub all: BTreeMap<String, usize>,
    /// ConfigMaps not (yet) where the ring wants them: unlabelled, labelled for another shard,
    /// or being drained.
    pub misplaced: usize,
    /// Every measured object.
    pub measured_total: usize,
}

/// Reads every ConfigMap's shard and drain labels and compares them with the ring of `shards`.
pub fn placement(server: &ApiServer, shards: &[String]) -> Placement {
    let ring = Ring::new(shards.iter().map(|shard| ShardName::new(shard.as_str())));
    let (shard_key, drain_key) = (shard_label(RING), drain_label(RING));
    let mut placement = Placement::default();
    for object in server.objects("", "configmaps") {
        let name = object_name(&object).unwrap_or_default();
        let namespace = object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let labels = object.pointer("/metadata/labels");
        let label = |key: &str| labels.and_then(|labels| labels.get(key)?.as_str());
        let wanted = ring.assign(&ring_key("", "ConfigMap", namespace, name));
        let measured = name.starts_with(PREFIX) && namespace == NAMESPACE;
        placement.measured_total += usize::from(measured);
        let Some(shard) = label(&shard_key) else {
            placement.misplaced += 1;
            continue;
        };
        if wanted.map(ShardName::as_str) != Some(shard) || label(&drain_key).is_some() {
            placement.misplaced += 1;
        }
        *placement.all.entry(shard.to_owned()).or_default() += 1;
        if measured {
            placement
                .measured
                .entry(shard.to_owned())
                .or_default()
                .insert(name.to_owned());
        }
    }
    placement
}
