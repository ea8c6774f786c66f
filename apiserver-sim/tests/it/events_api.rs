//! core/v1 `Event` and events.k8s.io/v1 `Event` are one stored resource: an event written
//! through either API is got, listed and watched through both (same name, uid and
//! resourceVersion), converted field by field, and the field selectors a real server
//! supports on events work through both. Sources: kubernetes `pkg/apis/events/v1/
//! conversion.go` (the conversion), `pkg/apis/events/selection.go` and the core/v1 field
//! label conversions (the selectable fields, `source` falling back to the reporting
//! controller).

use crate::common;

use k8s_openapi::api::core::v1::Event as CoreEvent;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn events_v1(v: Value) -> Event {
    serde_json::from_value(v).expect("events.k8s.io event")
}

#[tokio::test]
async fn an_event_written_through_either_api_is_read_through_both() {
    let server = common::server().await;
    let c = server.client().expect("client");
    let new_api: Api<Event> = Api::default_namespaced(c.clone());
    let core_api: Api<CoreEvent> = Api::default_namespaced(c.clone());

    let created = new_api
        .create(
            &PostParams::default(),
            &events_v1(json!({
                "metadata": {"name": "scaled"}, "eventTime": "2025-03-01T10:00:00.000000Z",
                "reportingController": "example.com/ctl", "reportingInstance": "ctl-0",
                "action": "Scale", "reason": "Scaled", "type": "Normal", "note": "scaled to 3",
                "regarding": {"kind": "Deployment", "name": "web", "namespace": "default"},
                "series": {"count": 2, "lastObservedTime": "2025-03-01T10:00:05.000000Z"},
            })),
        )
        .await
        .expect("create through events.k8s.io");
    let core = core_api.get("scaled").await.expect("get through core");
    assert_eq!(core.metadata.uid, created.metadata.uid);
    assert_eq!(
        core.metadata.resource_version,
        created.metadata.resource_version
    );
    assert_eq!(core.message.as_deref(), Some("scaled to 3"));
    assert_eq!(core.involved_object.name.as_deref(), Some("web"));
    assert_eq!(core.reporting_component.as_deref(), Some("example.com/ctl"));
    assert_eq!(core.reporting_instance.as_deref(), Some("ctl-0"));
    assert_eq!(core.series.as_ref().and_then(|s| s.count), Some(2));
    assert_eq!(core.action.as_deref(), Some("Scale"));

    let mut old = CoreEvent::default();
    old.metadata.name = Some("pulled".into());
    old.involved_object.kind = Some("Pod".into());
    old.involved_object.name = Some("p".into());
    old.reason = Some("Pulled".into());
    old.message = Some("image pulled".into());
    old.count = Some(4);
    old.source = Some(k8s_openapi::api::core::v1::EventSource {
        component: Some("kubelet".into()),
        host: Some("node-1".into()),
    });
    old.first_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2025-03-01T09:00:00Z".parse().expect("time"),
    ));
    core_api
        .create(&PostParams::default(), &old)
        .await
        .expect("create through core");
    let new = new_api
        .get("pulled")
        .await
        .expect("get through events.k8s.io");
    assert_eq!(new.note.as_deref(), Some("image pulled"));
    assert_eq!(
        new.regarding.as_ref().and_then(|r| r.name.as_deref()),
        Some("p")
    );
    assert_eq!(new.deprecated_count, Some(4));
    assert_eq!(
        new.deprecated_source
            .as_ref()
            .and_then(|s| s.host.as_deref()),
        Some("node-1")
    );
    assert!(new.deprecated_first_timestamp.is_some());

    // An update through one API is seen through the other, at the same resourceVersion.
    let patched = new_api
        .patch(
            "pulled",
            &PatchParams::default(),
            &Patch::Merge(json!({"note": "pulled again"})),
        )
        .await
        .expect("patch through events.k8s.io");
    let core = core_api.get("pulled").await.expect("get");
    assert_eq!(core.message.as_deref(), Some("pulled again"));
    assert_eq!(core.count, Some(4));
    assert_eq!(
        core.metadata.resource_version,
        patched.metadata.resource_version
    );

    // Both lists hold both events; the server's own view of either API is in its form.
    assert_eq!(
        new_api
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len(),
        2
    );
    assert_eq!(
        core_api
            .list(&ListParams::default())
            .await
            .expect("list")
            .items
            .len(),
        2
    );
    assert!(
        server
            .objects("events.k8s.io", "events")
            .iter()
            .all(|e| e["apiVersion"] == "events.k8s.io/v1")
    );
    assert!(
        server
            .objects("", "events")
            .iter()
            .all(|e| e["apiVersion"] == "v1")
    );
}

#[tokio::test]
async fn field_selectors_select_through_both_apis() {
    let server = common::server().await;
    let c = server.client().expect("client");
    let new_api: Api<Event> = Api::default_namespaced(c.clone());
    let core_api: Api<CoreEvent> = Api::default_namespaced(c.clone());
    for (name, object, reason) in [("a", "web", "Scaled"), ("b", "db", "Killed")] {
        new_api
            .create(
                &PostParams::default(),
                &events_v1(json!({
                "metadata": {"name": name}, "eventTime": "2025-03-01T10:00:00.000000Z",
                "reportingController": "ctl", "reportingInstance": "ctl-0", "action": "A",
                "reason": reason, "type": "Normal",
                "regarding": {"kind": "Deployment", "name": object, "namespace": "default"}})),
            )
            .await
            .expect("create");
    }
    let names = |items: Vec<String>| items.join(",");
    for sel in [
        "involvedObject.name=web",
        "reason=Scaled",
        "source=ctl,involvedObject.kind=Deployment,reason!=Killed",
        "reportingComponent=ctl,metadata.name=a",
    ] {
        let lp = ListParams::default().fields(sel);
        let core: Vec<String> = core_api
            .list(&lp)
            .await
            .expect("core list")
            .items
            .into_iter()
            .filter_map(|e| e.metadata.name)
            .collect();
        let new: Vec<String> = new_api
            .list(&lp)
            .await
            .expect("events list")
            .items
            .into_iter()
            .filter_map(|e| e.metadata.name)
            .collect();
        assert_eq!(names(core), "a", "core {sel}");
        assert_eq!(names(new), "a", "events.k8s.io {sel}");
    }
    let r = common::raw(
        &server,
        "GET",
        "/apis/events.k8s.io/v1/events?fieldSelector=note%3Dx",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 400, "{}", r.body);
}

#[tokio::test]
async fn watches_of_either_api_see_writes_through_the_other() {
    let server = common::server().await;
    let rv = server.resource_version();
    server
        .create_json(json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "old-style", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Started", "message": "started"}))
        .expect("core event");
    server
        .create_json(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "new-style", "namespace": "default"},
            "eventTime": "2025-03-01T10:00:00.000000Z", "reportingController": "ctl", "reportingInstance": "i",
            "action": "A", "reason": "R", "type": "Normal", "note": "n"}))
        .expect("events.k8s.io event");
    let (status, evs) = common::watch_events(
        &server,
        &format!("/apis/events.k8s.io/v1/namespaces/default/events?watch=1&resourceVersion={rv}"),
        2,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(evs[0]["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(evs[0]["object"]["note"], "started");
    assert_eq!(evs[0]["object"]["regarding"]["name"], "p");
    assert_eq!(evs[1]["object"]["metadata"]["name"], "new-style");
    let (status, evs) = common::watch_events(
        &server,
        &format!("/api/v1/namespaces/default/events?watch=1&resourceVersion={rv}"),
        2,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(evs[1]["object"]["apiVersion"], "v1");
    assert_eq!(evs[1]["object"]["message"], "n");
    assert_eq!(evs[1]["object"]["reportingComponent"], "ctl");
    // Field selectors filter the watches of both APIs.
    let (_, evs) = common::watch_events(
        &server,
        &format!(
            "/apis/events.k8s.io/v1/events?watch=1&resourceVersion={rv}&fieldSelector=reason%3DR"
        ),
        1,
    )
    .await;
    assert_eq!(evs[0]["object"]["metadata"]["name"], "new-style");
}
