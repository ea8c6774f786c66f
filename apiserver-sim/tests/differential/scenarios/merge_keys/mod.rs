//! Strategic merge on every list with a merge key: for each list field of each built-in kind
//! whose served schema gives it an `x-kubernetes-patch-merge-key` (found by walking the
//! simulator's own OpenAPI documents, `schema_walk`), an object of that kind is created with
//! the list holding two items (`items`), then changed as `kubectl apply` changes it: one field
//! of one item (or one more item, for items that are only their key) in a strategic merge
//! patch computed from the schemas (`smp`). The probe records the patch's answer and the list
//! it left (its items with the probe's keys: a controller may add its own). Lists in a
//! `status` are written through `/status`; a pod's ephemeral containers through
//! `/ephemeralcontainers`; the other lists of a pod's spec cannot change after create and
//! are probed through the kinds that hold a pod template (whose ephemeral containers are
//! not probed: a template may not have any).
//!
//! `every_merge_key_list_merges_on_the_simulator` checks the simulator's answers against what
//! a merge must give.

mod items;
mod objects;
mod schema_walk;
mod smp;

use serde_json::{Value, json};

use crate::ctx::{Ctx, MERGE, STRATEGIC};
use crate::target::Target;
use items::Change;
use objects::Env;
use schema_walk::{MergeList, Schemas, Step};

/// What one probe saw.
struct Outcome {
    /// The probe's id (`group/version/Kind/path`).
    id: String,
    /// What it records.
    record: Value,
    /// Why the simulator's answer is not a merge (checked on the simulator only).
    wrong: Option<String>,
}

/// Where the list is written first and patched: the object, `/status` or a pod's
/// `/ephemeralcontainers`.
fn subresource(list: &MergeList) -> Option<&'static str> {
    match list.path.first() {
        Some(Step::Field(f)) if f == "status" && list.kind.status => Some("status"),
        Some(Step::Field(f))
            if f == "spec" && list.kind.group.is_empty() && list.kind.kind == "Pod" =>
        {
            (list.path.get(1) == Some(&Step::Field("ephemeralContainers".into())))
                .then_some("ephemeralcontainers")
        }
        _ => None,
    }
}

/// Whether the list is probed: a pod template holds no ephemeral containers (upstream
/// refuses them), and a pod's spec can change only in its containers' images and its
/// ephemeral containers.
fn probed(list: &MergeList) -> bool {
    let dotted = list.dotted();
    if dotted.contains("template.spec.ephemeralContainers") {
        return false;
    }
    if !(list.kind.group.is_empty() && list.kind.kind == "Pod") {
        return true;
    }
    !dotted.starts_with("spec.")
        || matches!(
            dotted.as_str(),
            "spec.containers" | "spec.initContainers" | "spec.ephemeralContainers"
        )
}

/// Lists kube-apiserver refuses to hold or to change whatever the patch: object metadata
/// inside a template carries no owner references, a StatefulSet's claim templates cannot
/// change, and a (suspended, never started) Job's pod spec changes only in its scheduling
/// directives and its containers' resources, and an existing CSINode driver or ephemeral
/// container cannot change.
/// The simulator must refuse them as well (checked by `check`).
fn refused_upstream(list: &MergeList) -> bool {
    let dotted = list.dotted();
    dotted.ends_with("volumeClaimTemplate.metadata.ownerReferences")
        || (list.kind.kind == "ResourceClaimTemplate" && dotted == "spec.metadata.ownerReferences")
        || (list.kind.kind == "StatefulSet" && dotted.starts_with("spec.volumeClaimTemplates"))
        || (list.kind.kind == "CSINode" && dotted == "spec.drivers")
        || (list.kind.group.is_empty()
            && list.kind.kind == "Pod"
            && dotted == "spec.ephemeralContainers")
        || (list.kind.group == "batch"
            && list.kind.kind == "Job"
            && dotted.starts_with("spec.template.spec.")
            && !matches!(
                dotted.as_str(),
                "spec.template.spec.schedulingGates" | "spec.template.spec.tolerations"
            ))
}

/// Sets `path` in `obj` to `items`, making what lies on the way (the first item of each list
/// on it, from `items::of` or already there); `siblings` go beside the list.
fn put(obj: &mut Value, path: &[Step], items: Vec<Value>, siblings: &Value, owners: &[Value; 2]) {
    let mut cur = obj;
    for (i, step) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        cur = match step {
            Step::Field(f) if last => {
                if let (Some(parent), Some(extra)) = (cur.as_object_mut(), siblings.as_object()) {
                    parent.extend(extra.clone());
                }
                cur[f.as_str()] = Value::Array(items);
                return;
            }
            Step::Field(f) => {
                let next = &mut cur[f.as_str()];
                if next.is_null() {
                    *next = if path.get(i + 1) == Some(&Step::Item) {
                        json!([])
                    } else {
                        json!({})
                    };
                }
                next
            }
            Step::Item => {
                if cur.as_array().is_none_or(Vec::is_empty) {
                    let field = match i.checked_sub(1).and_then(|p| path.get(p)) {
                        Some(Step::Field(f)) => f.as_str(),
                        _ => "",
                    };
                    *cur = json!([intermediate(field, owners)]);
                }
                &mut cur[0]
            }
            Step::Value => &mut cur["k"],
        };
    }
}

/// The first item of a list on the way to a probed one (by the list's field name).
fn intermediate(field: &str, owners: &[Value; 2]) -> Value {
    let item = match field {
        "containers" | "initContainers" => "Container",
        "ephemeralContainers" => "EphemeralContainer",
        "webhooks" => "ValidatingWebhook",
        f if f.ends_with("ContainerStatuses") || f == "containerStatuses" => "ContainerStatus",
        // A StatefulSet's claim templates need a name, an access mode and a size.
        "volumeClaimTemplates" => {
            return json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}});
        }
        _ => "",
    };
    items::of(item, owners)
        .and_then(|s| s.items.into_iter().next())
        .unwrap_or_else(|| json!({}))
}

/// The list at `path` in `obj` (the first item of each list on the way).
fn at<'a>(obj: &'a Value, path: &[Step]) -> &'a Value {
    path.iter().fold(obj, |cur, step| match step {
        Step::Field(f) => &cur[f.as_str()],
        Step::Item => &cur[0],
        Step::Value => &cur["k"],
    })
}

/// The items of `list` whose `key` is one of `keys`.
fn keeping(list: &Value, key: &str, keys: &[Value]) -> Value {
    let kept = list.as_array().into_iter().flatten();
    Value::Array(kept.filter(|i| keys.contains(&i[key])).cloned().collect())
}

/// Whether `have` holds every field of `want` (objects compared field by field, lists item
/// by item): what the server adds (defaults) is left out of the comparison.
fn holds(have: &Value, want: &Value) -> bool {
    match (have, want) {
        (Value::Object(h), Value::Object(w)) => w
            .iter()
            .all(|(k, v)| h.get(k).is_some_and(|hv| holds(hv, v))),
        (Value::Array(h), Value::Array(w)) => {
            h.len() == w.len() && h.iter().zip(w).all(|(h, w)| holds(h, w))
        }
        _ => have == want,
    }
}

/// What a probe records when `step` (`create`, `write`, `patch`) is refused, and why.
fn refusal(step: &str, r: &crate::target::Resp) -> Option<(Value, String)> {
    if (200..300).contains(&r.status) {
        return None;
    }
    let message = r.json()["message"].clone();
    let why = format!("{step} answered {}: {message}", r.status);
    Some((json!({step: r.status, "message": message}), why))
}

async fn probe(
    ctx: &mut Ctx<'_>,
    schemas: &Schemas,
    env: &Env,
    owners: &[Value; 2],
    list: &MergeList,
    index: usize,
    created: &mut Vec<String>,
) -> Outcome {
    let kind = &list.kind;
    let id =
        format!("{}/{}", kind.api_version().replace('/', "."), kind.kind) + "/" + &list.dotted();
    let outcome = |record: Value, wrong: Option<String>| Outcome {
        id: id.clone(),
        record,
        wrong,
    };
    let must_refuse = refused_upstream(list);
    let name = objects::name(kind, index, &ctx.run);
    let (Some(mut obj), Some(sample)) = (
        objects::base(kind, env, &name),
        items::of(&list.item, owners),
    ) else {
        return outcome(
            json!("no sample"),
            Some(format!("no sample for {}", list.item)),
        );
    };
    let keys: Vec<Value> = sample.items.iter().map(|i| i[&list.key].clone()).collect();
    put(&mut obj, &list.path, sample.items, &sample.siblings, owners);
    let mut desired = obj.clone();
    let (keys, want) = {
        let target = at_mut(&mut desired, &list.path);
        let mut keys = keys;
        let want = match sample.change {
            Change::Field(change) => {
                if let Some(last) = target.as_array_mut().and_then(|l| l.last_mut()) {
                    merge_into(last, &change);
                }
                target
                    .as_array()
                    .and_then(|l| l.last())
                    .cloned()
                    .unwrap_or_default()
            }
            Change::Add(new) => {
                keys.push(new[&list.key].clone());
                if let Some(l) = target.as_array_mut() {
                    l.push(new.clone());
                }
                new
            }
        };
        (keys, want)
    };
    let sub = subresource(list);
    let collection = collection_path(kind, &env.ns);
    let object_path = format!("{collection}/{name}");
    // Create the object without what the subresource writes, then write that.
    let mut create = obj.clone();
    match sub {
        Some("status") => {
            if let Some(m) = create.as_object_mut() {
                m.remove("status");
            }
        }
        Some(_) => {
            if let Some(spec) = create["spec"].as_object_mut() {
                spec.remove("ephemeralContainers");
            }
        }
        None => {}
    }
    let body = create.to_string().into_bytes();
    let r = ctx
        .send(
            "POST",
            &collection,
            &[("Content-Type", "application/json")],
            body,
        )
        .await;
    if let Some(refused) = refusal("create", &r) {
        return outcome(refused.0, (!must_refuse).then_some(refused.1));
    }
    if !kind.namespaced {
        created.push(object_path.clone());
    }
    let target = match sub {
        Some(s) => format!("{object_path}/{s}"),
        None => object_path,
    };
    if let Some(s) = sub {
        let (ct, body) = if s == "status" {
            (MERGE, json!({"status": obj["status"]}))
        } else {
            (
                STRATEGIC,
                json!({"spec": {"ephemeralContainers": obj["spec"]["ephemeralContainers"]}}),
            )
        };
        let r = ctx
            .send(
                "PATCH",
                &target,
                &[("Content-Type", ct)],
                body.to_string().into_bytes(),
            )
            .await;
        if let Some(refused) = refusal("write", &r) {
            return outcome(refused.0, (!must_refuse).then_some(refused.1));
        }
    }
    let patch = smp::diff(schemas, Some(&kind.schema), &obj, &desired);
    let r = ctx
        .send(
            "PATCH",
            &target,
            &[("Content-Type", STRATEGIC)],
            patch.to_string().into_bytes(),
        )
        .await;
    if let Some(refused) = refusal("patch", &r) {
        return outcome(refused.0, (!must_refuse).then_some(refused.1));
    }
    let answer = r.json();
    let merged = keeping(at(&answer, &list.path), &list.key, &keys);
    let items = merged.as_array().map(Vec::as_slice).unwrap_or_default();
    let wrong = if must_refuse {
        Some(format!(
            "kube-apiserver refuses this list; merged: {merged}"
        ))
    } else if items.len() != keys.len() {
        Some(format!(
            "{} of the {} items are left: {merged}",
            items.len(),
            keys.len()
        ))
    } else if !items.iter().any(|i| holds(i, &want)) {
        Some(format!("no item holds {want}: {merged}"))
    } else {
        None
    };
    outcome(json!({"patch": r.status, "list": merged}), wrong)
}

fn at_mut<'a>(obj: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(obj, |cur, step| match step {
        Step::Field(f) => &mut cur[f.as_str()],
        Step::Item => &mut cur[0],
        Step::Value => &mut cur["k"],
    })
}

/// Merges the fields of `change` into `item` (objects field by field).
fn merge_into(item: &mut Value, change: &Value) {
    match (item, change) {
        (Value::Object(i), Value::Object(c)) => {
            for (k, v) in c {
                merge_into(i.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
        (i, c) => *i = c.clone(),
    }
}

fn collection_path(kind: &schema_walk::Kind, ns: &str) -> String {
    let root = if kind.group.is_empty() {
        format!("/api/{}", kind.version)
    } else {
        format!("/apis/{}/{}", kind.group, kind.version)
    };
    if kind.namespaced {
        format!("{root}/namespaces/{ns}/{}", kind.plural)
    } else {
        format!("{root}/{}", kind.plural)
    }
}

/// Runs every probe on `ctx`'s target: the outcomes.
async fn probes(ctx: &mut Ctx<'_>) -> Result<Vec<Outcome>, String> {
    let (schemas, lists) = schema_walk::walk().await?;
    ctx.namespace().await;
    let ns = ctx.ns();
    let key = rcgen::KeyPair::generate().map_err(|e| e.to_string())?;
    let params =
        rcgen::CertificateParams::new(vec!["mergekeys".to_string()]).map_err(|e| e.to_string())?;
    let csr = params.serialize_request(&key).map_err(|e| e.to_string())?;
    let cert = params.self_signed(&key).map_err(|e| e.to_string())?;
    let env = Env {
        ns: ns.clone(),
        cert: cert.pem(),
        csr: csr.pem().map_err(|e| e.to_string())?,
    };
    // Two owners of each scope, for the owner references.
    let mut owners = Vec::new();
    let mut created = Vec::new();
    for (path, name) in [
        (
            format!("/api/v1/namespaces/{ns}/configmaps"),
            "mk-owner-a".to_string(),
        ),
        (
            format!("/api/v1/namespaces/{ns}/configmaps"),
            "mk-owner-b".to_string(),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles".to_string(),
            ctx.unique("mk-owner-a"),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/clusterroles".to_string(),
            ctx.unique("mk-owner-b"),
        ),
    ] {
        let r = ctx
            .setup("POST", &path, json!({"metadata": {"name": name}}))
            .await;
        let (api_version, kind) = if path.contains("rbac") {
            created.push(format!("{path}/{name}"));
            ("rbac.authorization.k8s.io/v1", "ClusterRole")
        } else {
            ("v1", "ConfigMap")
        };
        owners.push(
            json!({"apiVersion": api_version, "kind": kind, "name": name,
            "uid": r.json()["metadata"]["uid"]}),
        );
    }
    let [a, b, ca, cb] = <[Value; 4]>::try_from(owners).map_err(|_| "owners".to_string())?;
    let (namespaced, cluster) = ([a, b], [ca, cb]);
    let mut outcomes = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for list in lists.iter().filter(|l| probed(l)) {
        // Versions of one resource (autoscaling v1 and v2) and one resource served in two
        // groups (core and events.k8s.io events) share their names.
        let n = index.entry(list.kind.plural.clone()).or_default();
        let owners = if list.kind.namespaced {
            &namespaced
        } else {
            &cluster
        };
        outcomes.push(probe(ctx, &schemas, &env, owners, list, *n, &mut created).await);
        *n += 1;
    }
    for path in created.iter().rev() {
        ctx.setup("DELETE", path, Value::Null).await;
    }
    Ok(outcomes)
}

pub async fn run(ctx: &mut Ctx<'_>) {
    match probes(ctx).await {
        Ok(outcomes) => {
            for o in outcomes {
                ctx.note(&o.id, o.record);
            }
        }
        Err(e) => ctx.errors.push(format!("mergekeys: {e}")),
    }
}

/// Runs the probes on `target` (the simulator): why each wrong one is not a merge, and the
/// ids of the lists probed.
pub async fn check(target: &Target) -> (Vec<String>, Vec<String>) {
    let mut ctx = Ctx::new(target, "check", "mergekeys");
    let outcomes = match probes(&mut ctx).await {
        Ok(o) => o,
        Err(e) => return (vec![e], Vec::new()),
    };
    let mut wrong: Vec<String> = ctx.errors.clone();
    wrong.extend(
        outcomes
            .iter()
            .filter_map(|o| o.wrong.as_ref().map(|w| format!("{}: {w}", o.id))),
    );
    (wrong, outcomes.into_iter().map(|o| o.id).collect())
}
