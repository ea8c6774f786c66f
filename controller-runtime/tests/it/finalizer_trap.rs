//! The finalizer helper under predicates that drop metadata-only updates. Adding a finalizer is
//! such an update: `GenerationChanged` drops it, so the reconcile that adds the finalizer must
//! go on by itself — here, to create the owned ConfigMap — instead of waiting for an event that
//! never comes. And the start of a deletion must reach the cleanup even on a kind without a
//! generation. Runs on the simulator and, with `KUBE_RT_TEST_KUBECONFIG`, on that cluster.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::*;
use controller_runtime::cache::Kind;
use controller_runtime::controller::predicate::{GenerationChanged, LabelsChanged};
use controller_runtime::controller::{
    Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn,
};
use controller_runtime::util::{
    FinalizerEvent, create_or_update, finalizer, set_controller_reference,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{DeleteParams, ObjectMeta, PostParams};
use kube::{Api, CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use testkit::eventually_async;

const FINALIZER: &str = "trap.kube-rt.dev/cleanup";
const LIMIT: Duration = Duration::from_secs(60);

/// A custom resource with a generation, as an operator's own kind has.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "trap.kube-rt.dev",
    version = "v1",
    kind = "Backup",
    namespaced
)]
pub struct BackupSpec {
    target: String,
}

/// The name of the ConfigMap a primary object named `name` owns.
fn owned_name(name: &str) -> String {
    format!("{name}-settings")
}

/// Reconciles `object` through the finalizer helper: applying creates the owned ConfigMap,
/// cleaning up deletes it (counted in `cleanups`).
async fn reconcile<K>(
    ctx: Context<K>,
    object: Arc<K>,
    cleanups: Arc<AtomicUsize>,
) -> Result<Action, ReconcileError>
where
    K: Kind + Serialize,
{
    let config_maps: Api<ConfigMap> = Api::namespaced(ctx.client().clone(), ns());
    finalizer(&ctx.api(), FINALIZER, object, |event| async move {
        let done: Result<Action, ReconcileError> = match event {
            FinalizerEvent::Apply(object) => {
                let name = owned_name(object.meta().name.as_deref().unwrap_or_default());
                let mut owned = Ok(());
                create_or_update(&config_maps, &name, |config_map| {
                    config_map.data = Some([("ready".to_owned(), "yes".to_owned())].into());
                    owned = set_controller_reference(object.as_ref(), config_map);
                })
                .await?;
                owned?;
                Ok(Action::done())
            }
            FinalizerEvent::Cleanup(object) => {
                let name = owned_name(object.meta().name.as_deref().unwrap_or_default());
                match config_maps.delete(&name, &DeleteParams::default()).await {
                    Ok(_) => {}
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(error) => return Err(error.into()),
                }
                cleanups.fetch_add(1, Ordering::SeqCst);
                Ok(Action::done())
            }
        };
        done
    })
    .await
}

/// Whether the ConfigMap `name` exists in the test namespace.
async fn config_map_exists(server: &TestCluster, name: &str) -> bool {
    server
        .list::<ConfigMap>()
        .await
        .unwrap()
        .iter()
        .any(|config_map| config_map.metadata.name.as_deref() == Some(name))
}

#[tokio::test]
async fn generation_changed_with_the_finalizer_creates_the_owned_object_and_deletes_cleanly() {
    let server = TestCluster::start().await.unwrap();
    install(&server, &Backup::crd()).await;
    let manager = Arc::new(manager(&server).build());
    let cleanups = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&cleanups);
    Controller::new(&manager)
        .for_(Watch::of::<Backup>().predicate(GenerationChanged))
        .owns(Watch::of::<ConfigMap>())
        .build(reconciler_fn(move |_req: Request, ctx: Context<Backup>| {
            let cleanups = Arc::clone(&counted);
            async move {
                let Some(backup) = ctx.get() else {
                    return Ok(Action::done());
                };
                reconcile(ctx, backup, cleanups).await
            }
        }))
        .unwrap();
    let running = spawn(&manager);

    let backups: Api<Backup> = Api::namespaced(server.client().unwrap(), ns());
    let backup = Backup::new(
        "nightly",
        BackupSpec {
            target: "s3://backups/nightly".into(),
        },
    );
    backups
        .create(&PostParams::default(), &backup)
        .await
        .unwrap();
    let owned = owned_name("nightly");
    eventually_async("the owned ConfigMap", LIMIT, || {
        config_map_exists(&server, &owned)
    })
    .await;
    let stored = backups.get("nightly").await.unwrap();
    assert_eq!(stored.metadata.finalizers, Some(vec![FINALIZER.to_owned()]));

    backups
        .delete("nightly", &DeleteParams::default())
        .await
        .unwrap();
    eventually_async("the Backup's removal", LIMIT, || async {
        backups.get_opt("nightly").await.unwrap().is_none()
    })
    .await;
    assert!(
        !config_map_exists(&server, &owned).await,
        "the cleanup deleted it"
    );
    // At least once: a reconcile queued by the owned ConfigMap's deletion may still find the
    // object, finalizer and all, in a cache that has not seen the finalizer go.
    assert!(cleanups.load(Ordering::SeqCst) >= 1);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}

/// A ConfigMap has no generation, so the start of its deletion changes neither its generation
/// nor its labels: the built-in change predicates still let that update through, or the
/// cleanup would never run and the object would stay `Terminating`.
#[tokio::test]
async fn change_predicates_let_the_start_of_a_deletion_through() {
    let server = TestCluster::start().await.unwrap();
    let manager = Arc::new(manager(&server).build());
    let cleanups = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&cleanups);
    // Only the test's primaries (a cluster's namespace has ConfigMaps of its own).
    let primary = |name: &str| name.starts_with("primary-") && !name.ends_with("-settings");
    Controller::new(&manager)
        .for_(
            Watch::of::<ConfigMap>()
                .predicate(GenerationChanged)
                .predicate(LabelsChanged),
        )
        .build(reconciler_fn(
            move |req: Request, ctx: Context<ConfigMap>| {
                let cleanups = Arc::clone(&counted);
                async move {
                    let Some(config_map) = ctx.get().filter(|_| primary(req.name())) else {
                        return Ok(Action::done());
                    };
                    reconcile(ctx, config_map, cleanups).await
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);

    let config_maps: Api<ConfigMap> = Api::namespaced(server.client().unwrap(), ns());
    let object = ConfigMap {
        metadata: ObjectMeta {
            name: Some("primary-a".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    config_maps
        .create(&PostParams::default(), &object)
        .await
        .unwrap();
    let owned = owned_name("primary-a");
    eventually_async("the owned ConfigMap", LIMIT, || {
        config_map_exists(&server, &owned)
    })
    .await;

    config_maps
        .delete("primary-a", &DeleteParams::default())
        .await
        .unwrap();
    eventually_async("the primary's removal", LIMIT, || async {
        !config_map_exists(&server, "primary-a").await
    })
    .await;
    assert!(!config_map_exists(&server, &owned).await);
    // At least once: a reconcile queued by the owned ConfigMap's deletion may still find the
    // object, finalizer and all, in a cache that has not seen the finalizer go.
    assert!(cleanups.load(Ordering::SeqCst) >= 1);

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
