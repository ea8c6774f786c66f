//! `metadata.managedFields` kept by every write made through the API: `Update` entries of
//! creates, updates and non-apply patches (field manager from `fieldManager` or the
//! `User-Agent`), client-sent entries, the reset request, subresource entries, objects
//! nobody owns yet, and the representations that carry the entries.
//!
//! Sources: Kubernetes docs, "Server-Side Apply" (sections named on each test);
//! kube-apiserver's field manager (apimachinery `managedfields/internal/fieldmanager.go`,
//! `skipnonapplied.go`, `managedfields.go`, `scalehandler.go`) and request handlers
//! (apiserver `endpoints/handlers/create.go`: `managerOrUserAgent`).

use crate::apply::{APPLY_CT, CMS, apply_raw, cm, entry, owned, owners};
use crate::common;

use serde_json::{Value, json};

const DEPLOYS: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn send(
    server: &apiserver_sim::ApiServer,
    method: &str,
    path: &str,
    ct: &str,
    extra: &[(&str, &str)],
    body: &Value,
) -> common::Raw {
    let mut headers = vec![("Content-Type", ct)];
    headers.extend_from_slice(extra);
    let text = body.to_string();
    common::raw(server, method, path, &headers, text.as_bytes()).await
}

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})
}

/// Docs, "Server-Side Apply": "Field management" (a create records an `Update` entry for
/// its field manager; maps and items the write added carry `.`) and "Comparison with Client
/// Side Apply" (an update takes the fields it changes or adds; an unchanged write records
/// nothing).
#[tokio::test]
async fn creates_and_updates_record_update_entries() {
    let server = common::server().await;
    let mut obj = cm("c", json!({"a": "1"}));
    obj["metadata"]["labels"] = json!({"app": "web"});
    let r = send(
        &server,
        "POST",
        &format!("{CMS}?fieldManager=creator"),
        "application/json",
        &[],
        &obj,
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    let created = r.json();
    let e = entry(&created, "creator", "Update").expect("create entry");
    assert_eq!(e["apiVersion"], "v1");
    assert_eq!(e["fieldsType"], "FieldsV1");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
    );
    let mut changed = created.clone();
    changed["data"] = json!({"a": "2", "b": "3"});
    let r = send(
        &server,
        "PUT",
        &format!("{CMS}/c?fieldManager=updater"),
        "application/json",
        &[],
        &changed,
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let updated = r.json();
    assert_eq!(
        owned(&updated, "creator", "Update"),
        json!({"f:data": {}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
    );
    assert_eq!(
        owned(&updated, "updater", "Update"),
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );
    // The same object again: nothing changes, not even the resourceVersion.
    let r = send(
        &server,
        "PUT",
        &format!("{CMS}/c?fieldManager=third"),
        "application/json",
        &[],
        &updated,
    )
    .await;
    assert_eq!(
        r.json()["metadata"]["resourceVersion"],
        updated["metadata"]["resourceVersion"]
    );
    assert!(entry(&r.json(), "third", "Update").is_none());

    // A Deployment: its Go zero value has spec, template and containers, so only what is
    // really added (labels, the container item) carries ".".
    let r = send(
        &server,
        "POST",
        &format!("{DEPLOYS}?fieldManager=creator"),
        "application/json",
        &[],
        &deployment("d"),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    // The defaults the server fills in are owned by the creator too, as upstream records them.
    let fields = owned(&r.json(), "creator", "Update");
    let spec = &fields["f:spec"];
    for f in [
        "f:replicas",
        "f:selector",
        "f:progressDeadlineSeconds",
        "f:revisionHistoryLimit",
    ] {
        assert_eq!(spec[f], json!({}), "{f}: {fields}");
    }
    assert_eq!(
        spec["f:strategy"],
        json!({"f:type": {}, "f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}}})
    );
    assert_eq!(
        spec["f:template"]["f:metadata"],
        json!({"f:labels": {".": {}, "f:app": {}}})
    );
    let app = &spec["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"app\"}"];
    for f in [
        ".",
        "f:image",
        "f:name",
        "f:imagePullPolicy",
        "f:terminationMessagePath",
    ] {
        assert_eq!(app[f], json!({}), "{f}: {app}");
    }
    server.shutdown().await;
}

/// apiserver `managerOrUserAgent`: a write without `fieldManager` is recorded for the
/// `User-Agent` up to its first `/` (`kubectl-create/v1.32.0 ...` gives `kubectl-create`), and
/// for `unknown` when there is none (apimachinery `buildmanagerinfo.go`).
#[tokio::test]
async fn the_user_agent_names_the_manager_by_default() {
    let server = common::server().await;
    let ua = [(
        "User-Agent",
        "kubectl-create/v1.32.0 (linux/amd64) kubernetes/abc1234",
    )];
    let r = send(
        &server,
        "POST",
        CMS,
        "application/json",
        &ua,
        &cm("a", json!({"k": "v"})),
    )
    .await;
    assert_eq!(
        owners(&r.json()),
        vec![("kubectl-create".to_string(), "Update".to_string())]
    );
    let r = send(
        &server,
        "POST",
        CMS,
        "application/json",
        &[],
        &cm("b", json!({"k": "v"})),
    )
    .await;
    assert_eq!(
        owners(&r.json()),
        vec![("unknown".to_string(), "Update".to_string())]
    );
    let patch = json!({"data": {"k": "w"}});
    let edit = [(
        "User-Agent",
        "kubectl-edit/v1.32.0 (linux/amd64) kubernetes/abc1234",
    )];
    let r = send(
        &server,
        "PATCH",
        &format!("{CMS}/a"),
        "application/strategic-merge-patch+json",
        &edit,
        &patch,
    )
    .await;
    assert_eq!(
        owned(&r.json(), "kubectl-edit", "Update"),
        json!({"f:data": {"f:k": {}}})
    );
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Clearing managedFields" (a non-apply write may set
/// `managedFields` to `[{}]` to strip every entry, and updates do not track an object
/// without entries; valid entries a client sends replace the server's, invalid ones are
/// ignored). Apimachinery `skipnonapplied.go`: the first apply to an object nobody owns
/// records its existing fields for `before-first-apply`.
#[tokio::test]
async fn clients_may_edit_or_reset_managed_fields() {
    let server = common::server().await;
    let r = send(
        &server,
        "POST",
        &format!("{CMS}?fieldManager=creator"),
        "application/json",
        &[],
        &cm("c", json!({"a": "1"})),
    )
    .await;
    let created = r.json();
    // Invalid entries are ignored: the live ones stay.
    let mut bad = created.clone();
    bad["metadata"]["managedFields"] = json!([{"manager": "x", "operation": "Patch"}]);
    let r = send(
        &server,
        "PUT",
        &format!("{CMS}/c"),
        "application/json",
        &[],
        &bad,
    )
    .await;
    assert_eq!(
        r.json()["metadata"]["managedFields"],
        created["metadata"]["managedFields"]
    );
    // Valid entries are the client's to set.
    let mut edited = created.clone();
    edited["metadata"]["managedFields"][0]["manager"] = json!("renamed");
    let r = send(
        &server,
        "PUT",
        &format!("{CMS}/c"),
        "application/json",
        &[],
        &edited,
    )
    .await;
    assert_eq!(
        owners(&r.json()),
        vec![("renamed".to_string(), "Update".to_string())]
    );
    // [{}] clears them, and later updates do not start tracking again.
    let reset = json!({"metadata": {"managedFields": [{}]}});
    let r = send(
        &server,
        "PATCH",
        &format!("{CMS}/c"),
        "application/merge-patch+json",
        &[],
        &reset,
    )
    .await;
    assert!(
        r.json()["metadata"].get("managedFields").is_none(),
        "{}",
        r.body
    );
    let r = send(
        &server,
        "PATCH",
        &format!("{CMS}/c?fieldManager=editor"),
        "application/merge-patch+json",
        &[],
        &json!({"data": {"b": "2"}}),
    )
    .await;
    assert!(
        r.json()["metadata"].get("managedFields").is_none(),
        "{}",
        r.body
    );
    // An apply starts tracking: what was there belongs to "before-first-apply".
    let r = apply_raw(
        &server,
        &format!("{CMS}/c"),
        "fieldManager=applier",
        &cm("c", json!({"a": "other"})).to_string(),
    )
    .await;
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(
        r.json()["message"],
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using v1: .data.a"
    );
    let r = apply_raw(
        &server,
        &format!("{CMS}/c"),
        "fieldManager=applier",
        &cm("c", json!({"a": "1"})).to_string(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let obj = r.json();
    assert_eq!(
        owned(&obj, "before-first-apply", "Update"),
        json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}})
    );
    assert_eq!(
        owned(&obj, "applier", "Apply"),
        json!({"f:data": {"f:a": {}}})
    );
    server.shutdown().await;
}

/// Docs, "Server-Side Apply": "Field management" (`subresource` names the subresource an
/// entry's fields were written through); apiserver status strategies (`GetResetFields`:
/// a status write owns only status, a main-resource write of a type with a status
/// subresource does not own status); apimachinery `scalehandler.go` (a `/scale` write owns
/// `.spec.replicas` in a `scale` entry).
#[tokio::test]
async fn subresource_writes_own_their_part_only() {
    let server = common::server().await;
    let path = format!("{DEPLOYS}/d");
    let r = apply_raw(
        &server,
        &path,
        "fieldManager=deployer",
        &deployment("d").to_string(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.body);
    // Status through /status: an Update entry with subresource status.
    let r = send(
        &server,
        "PATCH",
        &format!("{path}/status?fieldManager=controller"),
        "application/merge-patch+json",
        &[],
        &json!({"status": {"replicas": 1}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let e = entry(&r.json(), "controller", "Update").expect("status entry");
    assert_eq!(e["subresource"], "status");
    assert_eq!(e["apiVersion"], "apps/v1");
    assert_eq!(e["fieldsV1"], json!({"f:status": {"f:replicas": {}}}));
    // Apply through /status owns status only, even when the configuration has more.
    let cfg = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 9},
        "status": {"conditions": [{"type": "Available", "status": "True"}]}});
    let r = apply_raw(
        &server,
        &format!("{path}/status"),
        "fieldManager=status-applier",
        &cfg.to_string(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let obj = r.json();
    assert_eq!(
        obj["spec"]["replicas"], 1,
        "spec is not written through /status"
    );
    let e = entry(&obj, "status-applier", "Apply").expect("status apply entry");
    assert_eq!(e["subresource"], "status");
    assert_eq!(
        e["fieldsV1"],
        json!({"f:status": {"f:conditions": {"k:{\"type\":\"Available\"}": {".": {}, "f:status": {}, "f:type": {}}}}})
    );
    // Apply to the main resource ignores status.
    let mut cfg = deployment("d");
    cfg["spec"]["replicas"] = json!(2);
    cfg["status"] = json!({"replicas": 7});
    let r = apply_raw(&server, &path, "fieldManager=deployer", &cfg.to_string()).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let obj = r.json();
    assert_eq!(obj["status"]["replicas"], 1);
    assert_eq!(owned(&obj, "deployer", "Apply")["f:status"], Value::Null);
    // /scale: the replicas go to a scale entry.
    let r = send(
        &server,
        "PATCH",
        &format!("{path}/scale?fieldManager=scaler"),
        "application/merge-patch+json",
        &[],
        &json!({"spec": {"replicas": 5}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let obj = common::raw(&server, "GET", &path, &[], b"").await.json();
    let e = entry(&obj, "scaler", "Update").expect("scale entry");
    assert_eq!(e["subresource"], "scale");
    assert_eq!(e["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert!(
        owned(&obj, "deployer", "Apply")["f:spec"]
            .get("f:replicas")
            .is_none()
    );
    server.shutdown().await;
}

/// API concepts, "Receiving resources as metadata only" (`PartialObjectMetadata` carries the
/// whole `ObjectMeta`, `managedFields` included) and "Efficient detection of changes"
/// (watch events carry the object as stored).
#[tokio::test]
async fn managed_fields_appear_in_every_representation() {
    let server = common::server().await;
    apply_raw(
        &server,
        &format!("{CMS}/c"),
        "fieldManager=m",
        &cm("c", json!({"a": "1"})).to_string(),
    )
    .await;
    let full = common::raw(&server, "GET", &format!("{CMS}/c"), &[], b"")
        .await
        .json();
    let mf = full["metadata"]["managedFields"].clone();
    assert!(mf.is_array(), "{full}");
    let meta_ct = [(
        "Accept",
        "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
    )];
    let partial = common::raw(&server, "GET", &format!("{CMS}/c"), &meta_ct, b"")
        .await
        .json();
    assert_eq!(partial["kind"], "PartialObjectMetadata");
    assert_eq!(partial["metadata"]["managedFields"], mf);
    let list = common::raw(&server, "GET", CMS, &[], b"").await.json();
    assert_eq!(list["items"][0]["metadata"]["managedFields"], mf);
    let (_, events) =
        common::watch_events(&server, &format!("{CMS}?watch=1&resourceVersion=0"), 1).await;
    assert_eq!(events[0]["object"]["metadata"]["managedFields"], mf);
    // YAML bodies (kubectl's) are no different.
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: \"1\"}\n";
    let r = common::raw(
        &server,
        "PATCH",
        &format!("{CMS}/c?fieldManager=m"),
        &[("Content-Type", APPLY_CT)],
        yaml.as_bytes(),
    )
    .await;
    assert_eq!(r.json()["metadata"]["managedFields"], mf);
    server.shutdown().await;
}

/// Seeding is a test backdoor, not a request: the object is stored with the
/// `managedFields` it is given, as is (the framework's tests rely on it).
#[tokio::test]
async fn seeded_objects_keep_the_entries_they_are_given() {
    let server = common::server().await;
    let mut obj = cm("s", json!({"a": "1"}));
    obj["metadata"]["managedFields"] = json!([{"manager": "kubectl", "operation": "Update"}]);
    let stored = server.create_json(obj).expect("seed");
    assert_eq!(
        stored["metadata"]["managedFields"],
        json!([{"manager": "kubectl", "operation": "Update"}])
    );
    let plain = server
        .create_json(cm("p", json!({"a": "1"})))
        .expect("seed");
    assert!(plain["metadata"].get("managedFields").is_none());
    server.shutdown().await;
}
