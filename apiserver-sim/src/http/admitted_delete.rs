//! DELETE and deletecollection through admission: each object to delete is shown to the
//! mutating and then the validating webhooks (`operation: DELETE`, the stored object as
//! `oldObject`, no `object`) before it is deleted, as the generic registry's delete
//! validation does; a denial stops a deletecollection at that object.

use std::sync::Arc;

use http::Response;
use serde_json::{Value, json};

use super::admission_flow::Flow;
use super::render::{deleted_response, list_response};
use super::respond::Body;
use crate::admission::dispatch;
use crate::admission::matching::Operation;
use crate::admission::review::Failure;
use crate::machinery::meta;
use crate::machinery::query::ListOptions;
use crate::ops::{self, DeleteOptions, Deleted};
use crate::store::Stored;

/// The `DeleteOptions` object as the webhook receives it.
fn delete_options(body: &[u8], opts: &DeleteOptions) -> Value {
    let mut o = serde_json::from_slice::<Value>(body)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    o["kind"] = json!("DeleteOptions");
    o["apiVersion"] = json!("meta.k8s.io/v1");
    if opts.dry_run {
        o["dryRun"] = json!(["All"]);
    }
    o
}

impl Flow<'_, '_> {
    /// Shows the deletion of `old` (as stored) to the webhooks.
    async fn admit_delete(
        &self,
        old: &Value,
        opts: &DeleteOptions,
        options: &Value,
        warnings: &mut Vec<String>,
    ) -> Result<(), Failure> {
        let old_req = self.conv.convert(old.clone(), self.req.version).await?;
        let mut attrs = self.attributes(
            Operation::Delete,
            meta::name(old),
            None,
            Some(old_req),
            opts.dry_run,
            options.clone(),
        );
        if !attrs.info.namespaced {
            attrs.namespace = if attrs.info.group.is_empty() && attrs.info.plural == "namespaces" {
                meta::name(old).to_string()
            } else {
                String::new()
            };
        } else {
            attrs.namespace = meta::namespace(old).to_string();
        }
        let ctx = self.context(&attrs);
        dispatch::mutate(&ctx, &self.hooks.mutating, &mut attrs, warnings).await?;
        dispatch::validate(&ctx, &self.hooks.validating, &attrs, warnings).await
    }

    /// A deleted object in the request's version (a stored object of a type without
    /// conversion webhook is rendered in that version by the answer itself).
    async fn deleted_in_version(&self, out: Deleted) -> Result<Deleted, Failure> {
        if !self.conv.uses_webhook() {
            return Ok(out);
        }
        Ok(match out {
            Deleted::Marked(o) => Deleted::Marked(Arc::new(
                self.conv.convert((*o).clone(), self.req.version).await?,
            )),
            Deleted::Removed(o) => Deleted::Removed(Arc::new(
                self.conv.convert((*o).clone(), self.req.version).await?,
            )),
        })
    }

    pub(super) async fn delete(
        &self,
        body: &[u8],
        warnings: &mut Vec<String>,
    ) -> Result<Response<Body>, Failure> {
        let opts = DeleteOptions::parse(body, self.req.query)?;
        if let Some(old) = self.stored() {
            self.admit_delete(&old, &opts, &delete_options(body, &opts), warnings)
                .await?;
        }
        let req = self.req;
        let out = ops::delete(
            &mut self.shared.state.lock(),
            &req.info,
            req.ns.unwrap_or(""),
            req.name.unwrap_or(""),
            &opts,
        )?;
        let out = self.deleted_in_version(out).await?;
        Ok(deleted_response(req, &opts, out)?)
    }

    pub(super) async fn delete_collection(
        &self,
        body: &[u8],
        warnings: &mut Vec<String>,
    ) -> Result<Response<Body>, Failure> {
        let req = self.req;
        let opts = DeleteOptions::parse(body, req.query)?;
        let options = delete_options(body, &opts);
        let mut lo = ListOptions::parse(req.query, &req.info)?;
        lo.limit = 0;
        lo.continue_token = None;
        let items = self
            .shared
            .state
            .lock()
            .list(&req.info.key(), req.ns, &lo)?
            .items;
        let mut affected = Vec::new();
        for stored in items {
            let obj = stored.obj;
            self.admit_delete(&obj, &opts, &options, warnings).await?;
            let ns = meta::namespace(&obj).to_string();
            let out = ops::delete(
                &mut self.shared.state.lock(),
                &req.info,
                &ns,
                meta::name(&obj),
                &opts,
            );
            match out {
                Ok(d) => match self.deleted_in_version(d).await? {
                    Deleted::Marked(o) | Deleted::Removed(o) => affected.push(Stored::new(o)),
                },
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e.into()),
            }
        }
        let rv = self.shared.state.lock().rv;
        Ok(list_response(
            req,
            &affected,
            json!({"resourceVersion": rv.to_string()}),
        )?)
    }
}
