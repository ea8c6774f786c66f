//! `Manager::try_default` builds a manager with the default settings over a client inferred from
//! the environment, sending a User-Agent that names the binary (here: `KUBECONFIG` pointing at
//! the simulator's kubeconfig, a process-wide variable).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use crate::common::*;
use controller_runtime::{
    controller::{Action, Context, Controller, Request, Watch, reconciler_fn},
    manager::Manager,
};
use k8s_openapi::api::core::v1::ConfigMap;

pub(crate) async fn the_client_is_inferred_from_the_environment() {
    if testkit::cluster::sim_only("private instance") {
        return;
    }
    let server = apiserver_sim::ApiServer::start().await.unwrap();
    let path = std::env::temp_dir().join(format!(
        "controller-runtime-{}.kubeconfig",
        std::process::id()
    ));
    server.write_kubeconfig(&path).unwrap();
    // SAFETY: this binary runs its tests one at a time on one thread, so no other thread
    // reads the environment.
    unsafe { std::env::set_var("KUBECONFIG", &path) };
    let manager = Arc::new(Manager::try_default().await.unwrap());
    let counts = Counts::default();
    let seen = counts.clone();
    Controller::new(&manager)
        .for_(Watch::of::<ConfigMap>())
        .build(reconciler_fn(
            move |req: Request, _ctx: Context<ConfigMap>| {
                let seen = seen.clone();
                async move {
                    seen.hit(&req.to_string());
                    Ok::<_, Infallible>(Action::done())
                }
            },
        ))
        .unwrap();
    let running = spawn(&manager);
    server.create(&cm("a", "1")).unwrap();
    eventually("the reconcile", Duration::from_secs(30), || {
        counts.get("default/a") == 1
    })
    .await;
    // The client names the running binary in its User-Agent, which the server takes as the
    // field manager of a write that names none.
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(manager.client().clone(), "default");
    let written = api
        .create(&kube::api::PostParams::default(), &cm("b", "1"))
        .await
        .unwrap();
    let binary = std::env::args_os().next().unwrap();
    let binary = std::path::Path::new(&binary).file_name().unwrap();
    let managers: Vec<_> = written
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|entry| entry.manager)
        .collect();
    assert_eq!(managers, [binary.to_string_lossy()]);
    manager.shutdown_handle().shutdown();
    running.await.unwrap().unwrap();
    std::fs::remove_file(&path).unwrap();
    server.shutdown().await;
}
