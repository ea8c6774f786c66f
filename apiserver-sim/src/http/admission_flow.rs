//! One request's way through admission ([`Flow`]): its admission attributes, the webhooks'
//! context, decoding and defaulting like the write would, conversion to the stored version,
//! and the create, update (PUT) and patch sequences: mutate, dry-run, validate, commit.

use std::sync::Arc;

use http::{HeaderMap, Response};
use serde_json::{Map, Value, json};

use super::decode::{parse_body, write_options};
use super::render::object_response;
use super::request::{Req, Verb, okey};
use super::respond::Body;
use crate::admission::conversion::Converter;
use crate::admission::dispatch::{self, Context};
use crate::admission::hooks::Hooks;
use crate::admission::matching::{Attributes, NamespaceLabels, Operation};
use crate::admission::review::Failure;
use crate::api::patch::PatchKind;
use crate::machinery::meta;
use crate::machinery::query::Query;
use crate::machinery::resource_info::{GroupResourceRef, ResourceInfo};
use crate::machinery::status::{ApiError, ApiResult};
use crate::ops::{self, WriteOptions, validate};
use crate::shared::Shared;
use crate::store::State;

/// How many times a write without precondition is retried after a conflict.
pub(super) const ATTEMPTS: usize = 5;

/// The options object of an operation, as the webhook receives it.
pub(super) fn options(kind: &str, q: &Query, dry_run: bool) -> Value {
    let mut o = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if dry_run {
        o["dryRun"] = json!(["All"]);
    }
    if let Some(fm) = q.get("fieldManager") {
        o["fieldManager"] = json!(fm);
    }
    if kind == "PatchOptions" && q.flag("force") {
        o["force"] = json!(true);
    }
    o
}

fn labels(obj: Option<&Value>) -> Map<String, Value> {
    obj.and_then(|o| o.pointer("/metadata/labels"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn is_namespace(info: &ResourceInfo) -> bool {
    info.group.is_empty() && info.plural == "namespaces"
}

/// Puts an object that passed admission and a dry run into the store, if its name is still
/// free and its namespace still writable.
fn commit_create(st: &mut State, info: &ResourceInfo, obj: &Value) -> ApiResult<Arc<Value>> {
    let ns = meta::namespace(obj).to_string();
    validate::namespace_writable(st, info, &ns, Some(meta::name(obj)))?;
    let okey = (ns, meta::name(obj).to_string());
    if let Some(existing) = st.get(&info.key_ref(), &okey) {
        return Err(ApiError::already_exists(
            info,
            &okey.1,
            meta::is_deleting(&existing),
        ));
    }
    Ok(st.put_at(&info.key_ref(), okey, obj.clone()))
}

/// One request's way through admission.
pub(super) struct Flow<'a, 'r> {
    pub(super) shared: &'a Arc<Shared>,
    pub(super) req: &'a Req<'r>,
    pub(super) hooks: Arc<Hooks>,
    pub(super) conv: Converter,
}

impl Flow<'_, '_> {
    /// The request's admission attributes for one object.
    pub(super) fn attributes(
        &self,
        operation: Operation,
        name: &str,
        object: Option<Value>,
        old_object: Option<Value>,
        dry_run: bool,
        options: Value,
    ) -> Attributes {
        let info = &self.req.info;
        // A namespace's namespace is its own name (except while it is being created).
        let namespace = match (is_namespace(info), operation) {
            (true, Operation::Create) => String::new(),
            (true, _) => name.to_string(),
            (false, _) => self.req.ns.unwrap_or("").to_string(),
        };
        Attributes {
            operation,
            info: info.clone(),
            version: self.req.version.to_string(),
            subresource: self.req.sub.name().into(),
            name: name.to_string(),
            namespace,
            object,
            old_object,
            dry_run,
            options,
        }
    }

    /// What the webhooks of these attributes share.
    pub(super) fn context(&self, attrs: &Attributes) -> Context<'_> {
        let labels: NamespaceLabels = if is_namespace(&attrs.info)
            && matches!(attrs.operation, Operation::Create | Operation::Update)
        {
            Some(Some(labels(attrs.object.as_ref())))
        } else if attrs.namespace.is_empty() {
            None
        } else {
            let st = self.shared.state.lock();
            let key = GroupResourceRef::new("", "namespaces");
            let ns = st.get(&key, &(String::new(), attrs.namespace.clone()));
            Some(ns.map(|o| labels(Some(&o))))
        };
        Context {
            endpoints: &self.shared.config.service_endpoints,
            converter: &self.conv,
            namespace_labels: labels,
            chaos: self.shared.chaos.as_ref(),
        }
    }

    /// The stored object the request addresses.
    pub(super) fn stored(&self) -> Option<Arc<Value>> {
        self.shared
            .state
            .lock()
            .get(&self.req.info.key_ref(), &okey(self.req))
    }

    /// The object as the client sees it: in the request's version (a stored object of a type
    /// without conversion webhook is rendered in that version by the answer itself).
    pub(super) async fn reply(&self, code: u16, obj: &Value) -> Result<Response<Body>, Failure> {
        if !self.conv.uses_webhook() {
            return Ok(object_response(code, self.req, obj)?);
        }
        let out = self.conv.convert(obj.clone(), self.req.version).await?;
        Ok(object_response(code, self.req, &out)?)
    }

    /// Decodes and defaults a body as the write would, in the request's version; fields a
    /// custom resource's schema does not know are pruned, each with a warning unless the
    /// request asked to ignore them.
    fn normalize(
        &self,
        name: Option<&str>,
        mut obj: Value,
        wo: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> ApiResult<Value> {
        let (info, version) = (&self.req.info, self.req.version);
        validate::type_meta(info, version, &mut obj)?;
        for field in validate::prune(info, version, &mut obj, wo.field_validation)? {
            let warning = validate::unknown_field_warning(&field);
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
        }
        validate::name_and_namespace(info, self.req.ns, name, &mut obj)?;
        crate::kinds::schema::apply_defaults(info, version, &mut obj);
        if let Some(m) = obj.as_object_mut() {
            m.insert("apiVersion".into(), json!(info.api_version(version)));
        }
        Ok(obj)
    }

    /// The request's object as mutating webhooks will receive it, when any may change it.
    fn before_mutation(&self, attrs: &Attributes) -> Option<Value> {
        (!self.hooks.mutating.is_empty())
            .then(|| attrs.object.clone())
            .flatten()
    }

    /// `wo` noting the fields the webhooks added to `requested` (now `mutated`), which the
    /// writer does not own. Paths are compared in the request's version, so a type converted
    /// by a webhook for storage is left as it was.
    fn with_admission_changes(
        &self,
        wo: &WriteOptions,
        requested: Option<&Value>,
        mutated: Option<&Value>,
    ) -> WriteOptions {
        let mut wo = wo.clone();
        if let (Some(before), Some(after)) = (requested, mutated)
            && before != after
            && !self.conv.uses_webhook()
        {
            let added =
                crate::api::apply::fields_added(&self.req.info, self.req.version, before, after);
            wo.added_by_admission = (!added.is_empty()).then(|| Arc::new(added));
        }
        wo
    }

    /// The object in the version the write operations take it in, and that version.
    async fn to_storage(&self, obj: Value) -> Result<(Value, String), Failure> {
        if !self.conv.uses_webhook() {
            return Ok((obj, self.req.version.to_string()));
        }
        let storage = self.req.info.storage_version().to_string();
        Ok((self.conv.convert(obj, &storage).await?, storage))
    }

    /// CREATE or UPDATE (`verb`) of the request's body.
    pub(super) async fn write(
        &self,
        verb: Verb,
        headers: &HeaderMap,
        body: &[u8],
        warnings: &mut Vec<String>,
    ) -> Result<Response<Body>, Failure> {
        let wo = write_options(self.req, headers)?;
        let obj = parse_body(&self.req.info, self.req.version, headers, body)?;
        if verb == Verb::Create {
            return self.create(obj, &wo, warnings).await;
        }
        let retry = meta::resource_version(&obj).is_empty();
        let desired = |_old: &Value| Ok(obj.clone());
        self.replace_with_retries(&wo, retry, "UpdateOptions", warnings, desired)
            .await
    }

    /// CREATE: mutate, dry-run, validate, commit.
    pub(super) async fn create(
        &self,
        obj: Value,
        wo: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> Result<Response<Body>, Failure> {
        let input = self.normalize(None, obj, wo, warnings)?;
        let name = meta::name(&input).to_string();
        let opts = options("CreateOptions", self.req.query, wo.dry_run);
        let mut attrs = self.attributes(
            Operation::Create,
            &name,
            Some(input),
            None,
            wo.dry_run,
            opts,
        );
        let ctx = self.context(&attrs);
        let requested = self.before_mutation(&attrs);
        dispatch::mutate(&ctx, &self.hooks.mutating, &mut attrs, warnings).await?;
        let wo = &self.with_admission_changes(wo, requested.as_ref(), attrs.object.as_ref());
        let (body, version) = self
            .to_storage(attrs.object.take().unwrap_or_default())
            .await?;
        let (info, ns) = (&self.req.info, self.req.ns);
        if self.hooks.validating.is_empty() {
            let stored = ops::create(&mut self.shared.state.lock(), info, &version, ns, body, wo)?;
            return self.reply(201, &stored).await;
        }
        let dry = WriteOptions {
            dry_run: true,
            ..wo.clone()
        };
        let fin = ops::create(
            &mut self.shared.state.lock(),
            info,
            &version,
            ns,
            body,
            &dry,
        )?;
        attrs.name = meta::name(&fin).to_string();
        attrs.object = Some(self.conv.convert((*fin).clone(), self.req.version).await?);
        dispatch::validate(&ctx, &self.hooks.validating, &attrs, warnings).await?;
        if wo.dry_run {
            return self.reply(201, &fin).await;
        }
        let stored = commit_create(&mut self.shared.state.lock(), info, &fin)?;
        self.reply(201, &stored).await
    }

    /// UPDATE (PUT, PATCH): mutate `attrs.object`, dry-run, validate, commit; the stored object.
    pub(super) async fn replace(
        &self,
        attrs: &mut Attributes,
        wo: &WriteOptions,
        warnings: &mut Vec<String>,
    ) -> Result<Arc<Value>, Failure> {
        let ctx = self.context(attrs);
        let requested = self.before_mutation(attrs);
        dispatch::mutate(&ctx, &self.hooks.mutating, attrs, warnings).await?;
        let wo = &self.with_admission_changes(wo, requested.as_ref(), attrs.object.as_ref());
        let (body, version) = self
            .to_storage(attrs.object.take().unwrap_or_default())
            .await?;
        let req = self.req;
        let name = req.name.unwrap_or("");
        let run = |body: Value, opts: &WriteOptions| {
            let mut st = self.shared.state.lock();
            ops::update(
                &mut st,
                &req.info,
                &version,
                req.ns,
                name,
                body,
                req.sub.part(),
                opts,
            )
        };
        if self.hooks.validating.is_empty() {
            return Ok(run(body, wo)?);
        }
        let dry = WriteOptions {
            dry_run: true,
            ..wo.clone()
        };
        let fin = run(body, &dry)?;
        attrs.object = Some(self.conv.convert((*fin).clone(), req.version).await?);
        dispatch::validate(&ctx, &self.hooks.validating, attrs, warnings).await?;
        if wo.dry_run {
            return Ok(fin);
        }
        // The dry run's object is in its stored form; a type served in another form is
        // written again in the form the write takes.
        let body = match req.info.conversion {
            Some(_) => req.info.to_served(&version, &fin),
            None => (*fin).clone(),
        };
        Ok(run(body, wo)?)
    }

    /// PATCH other than server-side apply (`admitted_apply.rs`).
    pub(super) async fn patch(
        &self,
        wo: WriteOptions,
        kind: PatchKind,
        patch: &Value,
        warnings: &mut Vec<String>,
    ) -> Result<Response<Body>, Failure> {
        let retry = patch.pointer("/metadata/resourceVersion").is_none();
        let (info, version) = (&self.req.info, self.req.version);
        // Upstream hands a patch to admission as the update it becomes.
        self.replace_with_retries(&wo, retry, "UpdateOptions", warnings, |old| {
            ops::patched(info, version, old, kind, patch)
        })
        .await
    }

    /// An update of the stored object (seen in the request's version) to what `desired` makes of
    /// it, through admission; retried from a fresh read on a conflict when `retry` (the client
    /// named no resourceVersion), at most [`ATTEMPTS`] times.
    async fn replace_with_retries(
        &self,
        wo: &WriteOptions,
        retry: bool,
        options_kind: &str,
        warnings: &mut Vec<String>,
        desired: impl Fn(&Value) -> ApiResult<Value>,
    ) -> Result<Response<Body>, Failure> {
        let name = self.req.name.unwrap_or("");
        let mut attempt = 0;
        loop {
            attempt += 1;
            let Some(old) = self.stored() else {
                return Err(ApiError::not_found(&self.req.info, name).into());
            };
            let old = self.conv.convert((*old).clone(), self.req.version).await?;
            let input = self.normalize(Some(name), desired(&old)?, wo, warnings)?;
            let opts = options(options_kind, self.req.query, wo.dry_run);
            let mut attrs = self.attributes(
                Operation::Update,
                name,
                Some(input),
                Some(old),
                wo.dry_run,
                opts,
            );
            match self.replace(&mut attrs, wo, warnings).await {
                Ok(stored) => return self.reply(200, &stored).await,
                Err(f) if retry && f.code == 409 && attempt < ATTEMPTS => {}
                Err(f) => return Err(f),
            }
        }
    }
}
