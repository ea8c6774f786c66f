//! Field indexes: registered on the manager's cache, queried from a reconciler's context and from a
//! `watches` mapper, with the caches typed and compact; duplicate and unknown index names are
//! typed errors.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{Cache, Error, Storage};
use controller_runtime::controller::{Action, Context, Controller, Request, Watch, reconciler_fn};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use parking_lot::Mutex;

/// The index: the ConfigMap a Secret names in its `config-ref` annotation.
const INDEX: &str = "metadata.annotations.config-ref";

fn config_ref(secret: &Secret) -> Vec<String> {
    secret
        .metadata
        .annotations
        .as_ref()
        .and_then(|annotations| annotations.get("config-ref").cloned())
        .into_iter()
        .collect()
}

fn referencing(name: &str, config_map: &str) -> Secret {
    Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns().into()),
            annotations: Some([("config-ref".to_owned(), config_map.to_owned())].into()),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    }
}

/// Every Secret in the ConfigMap's namespace that names it.
fn secrets_referencing(cache: &Cache, config_map: &ConfigMap) -> Vec<ObjectKey> {
    let (namespace, name) = (
        config_map.metadata.namespace.clone().unwrap_or_default(),
        config_map.metadata.name.clone().unwrap_or_default(),
    );
    cache
        .lister::<Secret>()
        .and_then(|secrets| secrets.namespace(&namespace).keys_by_field(INDEX, &name))
        .unwrap_or_default()
}

#[tokio::test(start_paused = true)]
async fn a_config_map_change_reconciles_exactly_the_objects_that_reference_it() {
    reconciles_the_referencing_objects(Storage::typed()).await;
}

/// The same with both kinds kept compact: the index values come from the decoded Secrets (at
/// insert), the mapper reads decoded ConfigMaps.
#[tokio::test(start_paused = true)]
async fn a_config_map_change_reconciles_exactly_the_objects_that_reference_it_when_compact() {
    reconciles_the_referencing_objects(Storage::compact()).await;
}

async fn reconciles_the_referencing_objects(storage: Storage) {
    let server = TestCluster::start().await.unwrap();
    let secrets: Api<Secret> = Api::namespaced(server.client().unwrap(), ns());
    for (name, config_map) in [("s1", "a"), ("s2", "a"), ("s3", "b")] {
        secrets
            .create(&PostParams::default(), &referencing(name, config_map))
            .await
            .unwrap();
    }
    server.put("a", "1").await.unwrap();
    server.put("b", "1").await.unwrap();

    let manager = Arc::new(manager(&server).default_storage(storage).build());
    manager
        .cache()
        .index_field::<Secret>(INDEX, config_ref)
        .unwrap();
    let counts = Counts::default();
    // What each reconcile read from the index: the names of the Secrets sharing its ConfigMap.
    let siblings: Arc<Mutex<BTreeMap<String, Vec<String>>>> = Arc::default();
    let (seen, shared) = (counts.clone(), siblings.clone());
    let cache = manager.cache();
    Controller::new(&manager)
        .for_(Watch::of::<Secret>())
        .watches(Watch::of::<ConfigMap>(), move |config_map: &ConfigMap| {
            secrets_referencing(&cache, config_map)
        })
        .build(reconciler_fn(move |req: Request, ctx: Context<Secret>| {
            let (seen, shared) = (seen.clone(), shared.clone());
            async move {
                seen.hit(&req.to_string());
                if let Some(secret) = ctx.get() {
                    let value = config_ref(&secret).pop().unwrap_or_default();
                    let mut names: Vec<String> = ctx
                        .lister()
                        .namespace(ns())
                        .by_field(INDEX, &value)?
                        .iter()
                        .filter_map(|s| s.metadata.name.clone())
                        .collect();
                    names.sort();
                    shared.lock().insert(req.key.name().to_owned(), names);
                }
                Ok::<_, Error>(Action::done())
            }
        }))
        .unwrap();
    let running = spawn(&manager);
    let key = |name: &str| format!("{}/{name}", ns());
    eventually("the initial reconciles", Duration::from_secs(30), || {
        ["s1", "s2", "s3"]
            .iter()
            .all(|name| counts.get(&key(name)) >= 1)
    })
    .await;
    assert_eq!(siblings.lock()["s1"], ["s1", "s2"]);
    assert_eq!(siblings.lock()["s3"], ["s3"]);
    let before: Vec<usize> = ["s1", "s2", "s3"]
        .iter()
        .map(|n| counts.get(&key(n)))
        .collect();

    // A change to `a` reaches s1 and s2; then one to `b` reaches s3 (the queue is FIFO within
    // a priority, so by then anything `a` could have enqueued for s3 was reconciled).
    server.put("a", "2").await.unwrap();
    eventually("s1 and s2 again", Duration::from_secs(30), || {
        counts.get(&key("s1")) > before[0] && counts.get(&key("s2")) > before[1]
    })
    .await;
    assert_eq!(counts.get(&key("s3")), before[2]);
    server.put("b", "2").await.unwrap();
    eventually("s3 again", Duration::from_secs(30), || {
        counts.get(&key("s3")) > before[2]
    })
    .await;
    assert_eq!(counts.get(&key("s1")), before[0] + 1);
    assert_eq!(counts.get(&key("s2")), before[1] + 1);

    // The same name twice, and a name never registered, are typed errors.
    let twice = manager
        .cache()
        .index_field::<Secret>(INDEX, config_ref)
        .unwrap_err();
    assert!(matches!(&twice, Error::FieldIndexExists { index, .. } if index == INDEX));
    assert!(
        twice.to_string().contains("already registered for Secret"),
        "{twice}"
    );
    let unknown = manager
        .cache()
        .lister::<Secret>()
        .unwrap()
        .by_field("spec.nothing", "x")
        .unwrap_err();
    assert!(matches!(&unknown, Error::UnknownFieldIndex { index, .. } if index == "spec.nothing"));
    assert!(
        unknown.to_string().contains("Cache::index_field"),
        "{unknown}"
    );

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
