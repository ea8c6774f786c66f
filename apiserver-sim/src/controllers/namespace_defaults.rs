//! What kube-controller-manager puts in every namespace (optional, see
//! [`crate::ApiServerBuilder::namespace_defaults`]): the `default` ServiceAccount (the
//! serviceaccount controller) and the `kube-root-ca.crt` ConfigMap with the cluster's CA bundle
//! (the root-ca-cert-publisher), both made again when deleted and the ConfigMap set back when
//! changed, in every namespace that is not being deleted. Written through the normal write path
//! as `kube-controller-manager`.

use serde_json::{Value, json};

use crate::machinery::meta;
use crate::machinery::resource_info::GroupResource;
use crate::ops::{Ownership, Part, WriteOptions};
use crate::store::State;

/// The ConfigMap's name.
const ROOT_CA: &str = "kube-root-ca.crt";
/// Its description, as upstream's publisher writes it.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
    when using internal endpoints such as the internal service IP or kubernetes.default.svc. No \
    other usage is guaranteed across distributions of Kubernetes clusters.";

fn opts() -> WriteOptions {
    WriteOptions {
        field_manager: "kube-controller-manager".into(),
        ownership: Ownership::Record,
        ..Default::default()
    }
}

/// One pass; true if anything was written.
pub(super) fn reconcile(st: &mut State, root_ca: &str) -> bool {
    let namespaces: Vec<String> = st
        .resource(&GroupResource::new("", "namespaces"))
        .map(|rs| {
            rs.objects
                .values()
                .filter(|s| !meta::is_deleting(&s.obj))
                .map(|s| meta::name(&s.obj).to_string())
                .collect()
        })
        .unwrap_or_default();
    let data = json!({"ca.crt": root_ca});
    let mut changed = false;
    for ns in namespaces {
        changed |= ensure(st, "serviceaccounts", &ns, "default", |_| None);
        changed |= ensure(st, "configmaps", &ns, ROOT_CA, |cm| {
            let mut want = cm.clone();
            want["data"] = data.clone();
            let annotations = meta::metadata_mut(&mut want)
                .entry("annotations")
                .or_insert_with(|| json!({}));
            if let Some(a) = annotations.as_object_mut() {
                a.insert("kubernetes.io/description".into(), json!(DESCRIPTION));
            }
            (want != *cm).then_some(want)
        });
    }
    changed
}

/// Creates `ns/name` of `plural` when missing (as `fix` of an empty object makes it), or
/// writes what `fix` makes of the stored one; true if written.
fn ensure(
    st: &mut State,
    plural: &str,
    ns: &str,
    name: &str,
    fix: impl Fn(&Value) -> Option<Value>,
) -> bool {
    let gr = GroupResource::new("", plural);
    let Some(info) = st.resource(&gr).map(|r| r.info.clone()) else {
        return false;
    };
    let okey = (ns.to_string(), name.to_string());
    let result = match st.get(&gr, &okey) {
        Some(current) => match fix(&current) {
            Some(want) => {
                crate::ops::update(st, &info, "v1", Some(ns), name, want, Part::Main, &opts())
                    .map(|_| ())
            }
            None => return false,
        },
        None => {
            let empty = json!({"metadata": {"name": name, "namespace": ns}});
            let obj = fix(&empty).unwrap_or(empty);
            crate::ops::create(st, &info, "v1", Some(ns), obj, &opts()).map(|_| ())
        }
    };
    match result {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(namespace = ns, name, code = e.code, message = %e.message,
                "namespace defaults: write refused");
            false
        }
    }
}
