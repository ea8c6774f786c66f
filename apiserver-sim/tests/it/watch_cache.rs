//! The watch cache's lists: a list from resourceVersion "0" is served whole, its limit
//! ignored, as kube-apiserver's watch cache serves it; without the watch cache it is paginated.

use crate::common;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams};

use apiserver_sim::ApiServer;

use crate::apply::CMS;
use crate::list_watch::make_cm;

#[tokio::test]
async fn a_list_from_version_0_ignores_its_limit_unless_the_watch_cache_is_off() {
    for (watch_cache, first_page) in [(true, 3), (false, 2)] {
        let server = ApiServer::builder()
            .watch_cache(watch_cache)
            .start()
            .await
            .unwrap();
        let cms: Api<ConfigMap> = Api::default_namespaced(server.client().expect("client"));
        for name in ["a", "b", "c"] {
            make_cm(&cms, name, &[]).await;
        }
        let r = common::raw(
            &server,
            "GET",
            &format!("{CMS}?limit=2&resourceVersion=0"),
            &[],
            b"",
        )
        .await;
        let page = r.json();
        assert_eq!(
            page["items"].as_array().map(Vec::len),
            Some(first_page),
            "watch cache {watch_cache}"
        );
        assert_eq!(page["metadata"]["continue"].is_string(), !watch_cache);
        let from_latest = cms.list(&ListParams::default().limit(2)).await.unwrap();
        assert_eq!(
            from_latest.items.len(),
            2,
            "a list from the latest state pages"
        );
    }
}
