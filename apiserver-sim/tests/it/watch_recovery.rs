//! kube's own watcher, in both initial-list modes (list then watch, streaming list), converges
//! again after the simulator compacts its history under it.

use crate::common;

use std::collections::BTreeMap;

use apiserver_sim::ApiServer;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::ResourceExt;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::runtime::{reflector, watcher};
use serde_json::json;

async fn watcher_converges_after_compaction(server: &ApiServer, cfg: watcher::Config) {
    let client = server.client().expect("client");
    let cms: Api<ConfigMap> = Api::default_namespaced(client.clone());
    let secrets: Api<Secret> = Api::default_namespaced(client);
    for n in ["a", "b", "c"] {
        crate::list_watch::make_cm(&cms, n, &[]).await;
    }
    let (reader, writer) = reflector::store::<ConfigMap>();
    let stream = reflector::reflector(writer, watcher(cms.clone(), cfg));
    // Each `Init` starts a full (re)list: one at start, one more after the 410.
    let inits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = inits.clone();
    let task = tokio::spawn(async move {
        futures::pin_mut!(stream);
        while let Some(ev) = stream.next().await {
            if matches!(ev, Ok(watcher::Event::Init)) {
                seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
    });
    let server_state = || -> BTreeMap<String, String> {
        server
            .objects("", "configmaps")
            .iter()
            .map(|o| {
                (
                    o["metadata"]["name"].as_str().unwrap_or("").to_string(),
                    o["metadata"]["resourceVersion"]
                        .as_str()
                        .unwrap_or("")
                        .to_string(),
                )
            })
            .collect()
    };
    let cache_state = |r: &reflector::Store<ConfigMap>| -> BTreeMap<String, String> {
        r.state()
            .iter()
            .map(|c| (c.name_any(), c.resource_version().unwrap_or_default()))
            .collect()
    };
    common::eventually("the cache to equal the server", common::LIMIT, || {
        cache_state(&reader) == server_state()
    })
    .await;
    // Move the global RV past the watcher's last RV, compact, and cut every watch:
    // the watcher's resume RV is now too old, so it must relist.
    let mut s = Secret::default();
    s.metadata.name = Some("bump".into());
    secrets
        .create(&PostParams::default(), &s)
        .await
        .expect("secret");
    server.compact();
    server.drop_watches();
    cms.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    cms.patch(
        "b",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "y"}})),
    )
    .await
    .expect("patch");
    crate::list_watch::make_cm(&cms, "d", &[]).await;
    common::eventually(
        "the cache to equal the server after the relist",
        common::LIMIT,
        || cache_state(&reader) == server_state(),
    )
    .await;
    assert_eq!(
        inits.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "the expired resume RV made the watcher relist once"
    );
    task.abort();
}

#[tokio::test]
async fn kube_watcher_list_watch_mode_recovers_from_compaction() {
    let server = ApiServer::start().await.expect("server");
    watcher_converges_after_compaction(&server, watcher::Config::default().page_size(2)).await;
}

#[tokio::test]
async fn kube_watcher_streaming_list_mode_recovers_from_compaction() {
    let server = ApiServer::start().await.expect("server");
    watcher_converges_after_compaction(&server, watcher::Config::default().streaming_lists()).await;
}
