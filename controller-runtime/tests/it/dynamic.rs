//! Dynamic kinds: a controller whose primary kind is a `DynamicObject` of a CRD found by
//! discovery, owning typed objects; a typed controller watching the dynamic kind; a kind the
//! server does not serve is a typed error and the manager keeps running. Runs on the simulator
//! and, with `KUBE_RT_TEST_KUBECONFIG` set, against that cluster.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller_runtime::ObjectKey;
use controller_runtime::cache::{DynamicKind, Error};
use controller_runtime::controller::{
    Action, Context, Controller, ReconcileError, Request, Watch, reconciler_fn,
};
use controller_runtime::util::create_or_update;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};
use kube::{Api, CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Only here to generate the CRD; the controllers see Gizmos as `DynamicObject`s.
#[derive(CustomResource, Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[kube(group = "dyn.kube-rt.dev", version = "v1", kind = "Gizmo", namespaced)]
pub struct GizmoSpec {
    size: i64,
}

/// Each Gizmo gets a ConfigMap of the same name holding its size, controlled by the Gizmo.
async fn reconcile_gizmo(ctx: Context<DynamicObject>) -> Result<Action, ReconcileError> {
    let Some(gizmo) = ctx.get() else {
        return Ok(Action::done());
    };
    let size = gizmo.data["spec"]["size"].as_i64().unwrap_or_default();
    let resource = ctx.resource().clone();
    let owner = OwnerReference {
        api_version: resource.api_version,
        kind: resource.kind,
        name: gizmo.metadata.name.clone().unwrap_or_default(),
        uid: gizmo.metadata.uid.clone().unwrap_or_default(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    };
    let namespace = gizmo.metadata.namespace.clone().unwrap_or_default();
    let config_maps: Api<ConfigMap> = Api::namespaced(ctx.client().clone(), &namespace);
    let name = gizmo.metadata.name.clone().unwrap_or_default();
    create_or_update(&config_maps, &name, |cm| {
        cm.data = Some([("size".to_owned(), size.to_string())].into());
        cm.metadata.owner_references = Some(vec![owner]);
    })
    .await?;
    Ok(Action::done())
}

/// Waits until ConfigMap `name` exists and returns its `size`.
async fn size_of(config_maps: &Api<ConfigMap>, name: &str) -> String {
    testkit::eventually_some("the ConfigMap", Duration::from_secs(30), || async {
        let cm = config_maps.get_opt(name).await.unwrap()?;
        cm.data?.get("size").cloned()
    })
    .await
}

#[tokio::test(start_paused = true)]
async fn a_dynamic_kind_is_reconciled_owned_and_watched() {
    let server = TestCluster::start().await.unwrap();
    let client = server.client().unwrap();
    let gizmo = install(&server, &Gizmo::crd()).await;
    assert!(gizmo.is_namespaced());
    assert_eq!(gizmo.resource().plural, "gizmos");

    let manager = Arc::new(manager(&server).build());
    Controller::new(&manager)
        .for_(Watch::dynamic(gizmo.clone()))
        .owns(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            |_req: Request, ctx: Context<DynamicObject>| reconcile_gizmo(ctx),
        ))
        .unwrap();
    // A typed controller watching the dynamic kind: each Gizmo requests its ConfigMap.
    let counts = Counts::default();
    let seen = counts.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .watches(Watch::dynamic(gizmo.clone()), |gizmo: &DynamicObject| {
            let (namespace, name) = (
                gizmo.metadata.namespace.as_deref(),
                gizmo.metadata.name.as_deref(),
            );
            ObjectKey::new(namespace, name.unwrap_or_default()).ok()
        })
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    seen.hit(&req.to_string());
                    Ok::<_, Error>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);

    let gizmos: Api<DynamicObject> = Api::namespaced_with(client.clone(), ns(), gizmo.resource());
    let mut g1 = DynamicObject::new("g1", gizmo.resource()).within(ns());
    g1.data = serde_json::json!({"spec": {"size": 3}});
    gizmos.create(&PostParams::default(), &g1).await.unwrap();

    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns());
    let created = size_of(&config_maps, "g1").await;
    assert_eq!(created, "3", "the dynamic controller created the ConfigMap");
    eventually(
        "the watching controller saw g1",
        Duration::from_secs(30),
        || counts.get(&format!("{}/g1", ns())) >= 1,
    )
    .await;
    let cached = manager.cache().dynamic_lister(&gizmo).unwrap();
    let from_cache = cached.namespace(ns()).get("g1").unwrap().unwrap();
    assert_eq!(from_cache.data["spec"]["size"], 3);

    // Deleting the owned ConfigMap makes `owns` request its dynamic owner again.
    config_maps
        .delete("g1", &DeleteParams::default())
        .await
        .unwrap();
    let restored = size_of(&config_maps, "g1").await;
    assert_eq!(restored, "3", "the owner recreated its ConfigMap");

    // A kind the server does not serve: typed errors, and the manager runs on.
    let error = DynamicKind::discover(&client, "nope.kube-rt.dev", "v1", "Nothing")
        .await
        .unwrap_err();
    assert!(
        matches!(&error, Error::KindNotServed { kind, waited: None } if kind.contains("Nothing")),
        "{error}"
    );
    let missing = DynamicKind::namespaced(ApiResource::from_gvk(&GroupVersionKind::gvk(
        "nope.kube-rt.dev",
        "v1",
        "Nothing",
    )));
    let error = manager
        .cache()
        .wait_for_dynamic_kind(&missing, Duration::from_millis(500))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            Error::KindNotServed {
                waited: Some(_),
                ..
            }
        ),
        "{error}"
    );
    assert!(matches!(
        manager.cache().dynamic_lister(&missing),
        Err(Error::NotCached(_))
    ));
    let mut g2 = DynamicObject::new("g2", gizmo.resource()).within(ns());
    g2.data = serde_json::json!({"spec": {"size": 5}});
    gizmos.create(&PostParams::default(), &g2).await.unwrap();
    assert_eq!(size_of(&config_maps, "g2").await, "5");
    assert!(!running.is_finished());

    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    server.shutdown().await;
}
