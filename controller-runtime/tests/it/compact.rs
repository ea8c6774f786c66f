//! A kind kept compact ([`Storage::compact`]) reads as the typed cache does: the same objects,
//! field for field, by key, by label selector, per namespace and by field index; its typed
//! informers are refused with a clear error and its compact informers hold the encoded objects.
//! Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{ByObject, Error, Storage};
use controller_runtime::controller::{
    self, Action, Context, Controller, Request, Watch, reconciler_fn,
};
use controller_runtime::indexer::compact::{CodecOptions, Encoding};
use controller_runtime::manager::Manager;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::core::{Expression, Selector};

/// A ConfigMap with every part a cache keeps: labels, annotations, a reference to `owner`,
/// data and binary data.
fn rich(name: &str, tier: &str, owner: &ConfigMap) -> ConfigMap {
    let mut obj = own_cm(name, name);
    let meta = &mut obj.metadata;
    meta.labels
        .get_or_insert_with(BTreeMap::new)
        .insert("tier".to_owned(), tier.to_owned());
    meta.annotations = Some([("note".to_owned(), format!("the {name} settings"))].into());
    meta.owner_references = Some(vec![OwnerReference {
        api_version: "v1".to_owned(),
        kind: "ConfigMap".to_owned(),
        name: owner.metadata.name.clone().unwrap_or_default(),
        uid: owner.metadata.uid.clone().unwrap_or_default(),
        ..OwnerReference::default()
    }]);
    obj.binary_data = Some(
        [(
            "blob".to_owned(),
            k8s_openapi::ByteString(name.as_bytes().to_vec()),
        )]
        .into(),
    );
    obj
}

fn by_name(mut objects: Vec<Arc<ConfigMap>>) -> Vec<Arc<ConfigMap>> {
    objects.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    objects
}

/// The test's ConfigMaps as `manager` reads them through its lister, by every kind of read.
struct Reads {
    all: Vec<Arc<ConfigMap>>,
    front: Vec<Arc<ConfigMap>>,
    in_namespace: Vec<Arc<ConfigMap>>,
    one: Option<Arc<ConfigMap>>,
    by_field: Vec<Arc<ConfigMap>>,
}

fn reads(manager: &Manager) -> Reads {
    let lister = manager.cache().lister::<ConfigMap>().unwrap();
    let own: Selector = Expression::Exists(OWN_LABEL.to_owned()).into();
    let front = Selector::from_iter([
        Expression::Exists(OWN_LABEL.to_owned()),
        Expression::Equal("tier".to_owned(), "front".to_owned()),
    ]);
    let key: ObjectKey = format!("{}/b", ns()).parse().unwrap();
    Reads {
        all: by_name(lister.list(&own)),
        front: by_name(lister.list(&front)),
        in_namespace: by_name(lister.namespace(ns()).list(&own).unwrap()),
        one: lister.get_by_key(&key).unwrap(),
        by_field: by_name(lister.by_field("tier", "back").unwrap()),
    }
}

fn tier(cm: &ConfigMap) -> Vec<String> {
    cm.metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get("tier").cloned())
        .into_iter()
        .collect()
}

#[tokio::test(start_paused = true)]
async fn compact_reads_equal_typed_reads_field_for_field() {
    let server = TestCluster::start().await.unwrap();
    // The owner the test's objects reference (the garbage collector deletes dependents whose
    // owner does not exist); not one of the test's objects itself.
    let owner = server.create(&cm("compact-owner", "")).await.unwrap();
    for (name, tier) in [("a", "front"), ("b", "back"), ("c", "front"), ("d", "back")] {
        server.create(&rich(name, tier, &owner)).await.unwrap();
    }
    let typed = Arc::new(manager(&server).build());
    let compact = Arc::new(
        manager(&server)
            .by_object(ByObject::of::<ConfigMap>().storage(
                // Plain JSON for one, the default zstd dictionary below: both decode the same.
                Storage::compact().codec(CodecOptions::new().encoding(Encoding::Json)),
            ))
            .build(),
    );
    let zstd = Arc::new(
        manager(&server)
            .default_storage(Storage::compact().recently_decoded(16))
            .build(),
    );
    for manager in [&typed, &compact, &zstd] {
        manager
            .cache()
            .index_field::<ConfigMap>("tier", tier)
            .unwrap();
    }
    let running: Vec<_> = [&typed, &compact, &zstd].into_iter().map(spawn).collect();
    for manager in [&typed, &compact, &zstd] {
        let lister = manager.cache().lister::<ConfigMap>().unwrap();
        tokio::time::timeout(Duration::from_secs(30), lister.synced())
            .await
            .expect("the cache synced");
    }

    let expected = reads(&typed);
    assert_eq!(expected.all.len(), 4);
    assert_eq!(expected.front.len(), 2);
    assert_eq!(expected.by_field.len(), 2);
    assert!(expected.one.is_some());
    for manager in [&compact, &zstd] {
        let lister = manager.cache().lister::<ConfigMap>().unwrap();
        assert!(lister.is_compact());
        let read = reads(manager);
        assert_eq!(read.all, expected.all);
        assert_eq!(read.front, expected.front);
        assert_eq!(read.in_namespace, expected.in_namespace);
        assert_eq!(read.one, expected.one);
        assert_eq!(read.by_field, expected.by_field);
        // The typed informers do not exist; the compact ones hold the objects, encoded.
        let refused = manager.cache().informers::<ConfigMap>().unwrap_err();
        assert!(matches!(refused, Error::CompactStorage(_)), "{refused}");
        assert!(
            refused.to_string().contains("compact_informers"),
            "{refused}"
        );
        let informers = manager.cache().compact_informers::<ConfigMap>().unwrap();
        assert_eq!(informers.len(), 1);
        let stored = informers[0].indexer().list();
        assert!(stored.len() >= 4);
        assert!(stored.iter().all(|obj| obj.decoded().is_none()));
    }
    assert!(!typed.cache().lister::<ConfigMap>().unwrap().is_compact());
    assert!(
        typed
            .cache()
            .compact_informers::<ConfigMap>()
            .unwrap()
            .is_empty()
    );

    for manager in [&typed, &compact, &zstd] {
        manager.shutdown_handle().shutdown();
    }
    for run in running {
        run.await.unwrap().unwrap();
    }
    server.shutdown().await;
}

/// A watch asks for compact storage: the kind's cache is compact and the reconciler reads whole
/// objects from it; a second watch asking for typed storage, or a kind whose settings say
/// typed, is refused naming both.
#[tokio::test(start_paused = true)]
async fn a_watch_chooses_its_kinds_storage_and_a_contradiction_is_refused() {
    let server = TestCluster::start().await.unwrap();
    server.create(&own_cm("chosen", "value")).await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let seen: Arc<parking_lot::Mutex<Vec<String>>> = Arc::default();
    let recorded = seen.clone();
    Controller::new(&manager)
        .for_(
            Watch::of::<ConfigMap>()
                .predicate(own_only())
                .storage(Storage::compact()),
        )
        .build(reconciler_fn(move |_: Request, ctx: Context<ConfigMap>| {
            let value = ctx.get().and_then(|cm| cm.data.as_ref()?.get("v").cloned());
            recorded.lock().extend(value);
            async { Ok::<_, std::convert::Infallible>(Action::done()) }
        }))
        .unwrap();
    assert!(manager.cache().lister::<ConfigMap>().unwrap().is_compact());
    let typed_watch = Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>().storage(Storage::typed()))
        .named("typed")
        .build(reconciler_fn(|_: Request, _: Context<ConfigMap>| async {
            Ok::<_, std::convert::Infallible>(Action::done())
        }));
    let Err(controller::Error::Cache(refused)) = typed_watch else {
        panic!("a typed watch of a compact cache was built: {typed_watch:?}");
    };
    assert!(
        refused.to_string().contains("cached compact already"),
        "{refused}"
    );

    let running = spawn(&manager);
    eventually(
        "the reconcile read the whole object",
        Duration::from_secs(30),
        || seen.lock().contains(&"value".to_owned()),
    )
    .await;
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();

    let settings_say_typed = manager_builder_typed(&server);
    let refused = Controller::new(&settings_say_typed)
        .for_(Watch::of::<ConfigMap>().storage(Storage::compact()))
        .build(reconciler_fn(|_: Request, _: Context<ConfigMap>| async {
            Ok::<_, std::convert::Infallible>(Action::done())
        }));
    let Err(controller::Error::Cache(refused)) = refused else {
        panic!("a compact watch of a kind set typed was built: {refused:?}");
    };
    assert!(
        refused
            .to_string()
            .contains("a watch asks for compact storage and the kind's settings for typed"),
        "{refused}"
    );
    server.shutdown().await;
}

/// A manager whose settings keep ConfigMaps typed.
fn manager_builder_typed(server: &TestCluster) -> Manager {
    manager(server)
        .by_object(ByObject::of::<ConfigMap>().storage(Storage::typed()))
        .build()
}
