//! POST: create an object.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::{Ownership, WriteOptions};
use super::{owner_refs, validate};
use crate::machinery::meta;
use crate::machinery::pointer::text;
use crate::machinery::resource_info::{GenerationRule, ResourceInfo};
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// Type-specific defaults applied on create.
fn defaults_on_create(info: &ResourceInfo, obj: &mut Value) {
    if info.status_subresource
        && let Some(m) = obj.as_object_mut()
    {
        m.remove("status");
    }
    if info.builtin {
        crate::kinds::defaults::status_on_create(info, obj);
    }
    if info.builtin && info.group.is_empty() && info.plural == "namespaces" {
        let name = meta::name(obj).to_string();
        if let Some(m) = obj.as_object_mut() {
            let spec = m.entry("spec").or_insert_with(|| json!({}));
            if let Some(spec) = spec.as_object_mut() {
                let fins = spec.entry("finalizers").or_insert_with(|| json!([]));
                if let Some(list) = fins.as_array_mut()
                    && !list.iter().any(|f| f == "kubernetes")
                {
                    list.push(json!("kubernetes"));
                }
            }
            m.insert("status".into(), json!({"phase": "Active"}));
        }
        let md = meta::metadata_mut(obj);
        let labels = md.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }
    if info.group == "apiextensions.k8s.io" {
        crate::kinds::crd::default_spec(obj);
    }
}

/// Secrets: `stringData` is merged into `data` (base64) and never stored.
pub(crate) fn merge_string_data(info: &ResourceInfo, obj: &mut Value) {
    if !(info.builtin && info.group.is_empty() && info.plural == "secrets") {
        return;
    }
    let Some(m) = obj.as_object_mut() else { return };
    let Some(Value::Object(string_data)) = m.remove("stringData") else {
        return;
    };
    let data = m.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    if let Some(d) = data.as_object_mut() {
        for (k, v) in string_data {
            let text = v.as_str().unwrap_or("").as_bytes().to_vec();
            d.insert(k, Value::String(STANDARD.encode(text)));
        }
    }
}

/// Creates an object; returns the stored object (or what would be stored, on dry run).
pub fn create(
    st: &mut State,
    info: &ResourceInfo,
    version: &str,
    url_ns: Option<&str>,
    obj: Value,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    match super::convert::into_stored(st, info, version, url_ns, None, obj, opts)? {
        Ok(w) => create_stored(st, &w.info, &w.version, url_ns, w.obj, &w.opts),
        Err(obj) => create_stored(st, info, version, url_ns, obj, opts),
    }
}

/// [`create`] of an object in its stored form.
fn create_stored(
    st: &mut State,
    info: &ResourceInfo,
    version: &str,
    url_ns: Option<&str>,
    mut obj: Value,
    opts: &WriteOptions,
) -> ApiResult<Arc<Value>> {
    validate::type_meta(info, version, &mut obj)?;
    validate::prune(info, version, &mut obj, opts.field_validation)?;
    validate::name_and_namespace(info, url_ns, None, &mut obj)?;
    validate::omit_empty_metadata(&mut obj);
    let ns = meta::namespace(&obj).to_string();
    validate::namespace_writable(st, info, &ns, Some(meta::name(&obj)))?;
    if meta::name(&obj).is_empty() {
        let prefix = text(&obj, "/metadata/generateName").to_string();
        if !prefix.is_empty() {
            meta::set_str(
                &mut obj,
                "name",
                &format!("{prefix}{}", meta::random_suffix()),
            );
        }
    }
    if !meta::resource_version(&obj).is_empty() {
        return Err(ApiError::new(
            500,
            "",
            "resourceVersion should not be set on objects to be created",
        ));
    }
    crate::kinds::schema::apply_defaults(info, version, &mut obj);
    let causes = validate::object(info, &obj);
    let name = meta::name(&obj).to_string();
    if !causes.is_empty() {
        return Err(ApiError::invalid(info, &name, causes));
    }
    validate::typed(info, version, &obj)?;
    if let Some(admission) = &opts.owner_refs {
        let written = owner_refs::Written {
            info,
            namespace: &ns,
            name: &name,
            subresource: opts.subresource,
        };
        admission.admit(st, &written, &obj, None)?;
    }
    let key = info.key_ref();
    let okey = (ns, name);
    if let Some(existing) = st.get(&key, &okey) {
        return Err(ApiError::already_exists(
            info,
            &okey.1,
            meta::is_deleting(&existing),
        ));
    }
    super::service_ip::allocate(st, info, &mut obj)?;
    defaults_on_create(info, &mut obj);
    merge_string_data(info, &mut obj);
    let md = meta::metadata_mut(&mut obj);
    for f in [
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
        "uid",
        "creationTimestamp",
        "selfLink",
    ] {
        md.remove(f);
    }
    md.insert("uid".into(), Value::String(meta::new_uid()));
    md.insert(
        "creationTimestamp".into(),
        Value::String(meta::now_rfc3339()),
    );
    if info.generation != GenerationRule::None {
        md.insert("generation".into(), json!(1));
    }
    crate::kinds::defaults::job_selector(info, &mut obj);
    if opts.ownership == Ownership::Record {
        crate::api::apply::record_update(info, version, opts.writer(), None, &mut obj);
    }
    if opts.dry_run {
        return Ok(Arc::new(obj));
    }
    Ok(st.put_at(&key, okey, obj))
}
