//! Server-side apply through admission: the configuration is applied as a dry run (field
//! ownership and conflicts settled there), then the applied object goes through admission
//! like a create (the object did not exist) or an update, and is written with the ownership
//! the apply computed.

use http::Response;
use serde_json::Value;

use super::admission_flow::{ATTEMPTS, Flow, options};
use super::respond::Body;
use crate::admission::matching::Operation;
use crate::admission::review::Failure;
use crate::machinery::meta;
use crate::ops;
use crate::ops::{Ownership, WriteOptions};

impl Flow<'_, '_> {
    /// Server-side apply: the configuration is applied as a dry run (field ownership and
    /// conflicts settled there), then the applied object goes through admission like a
    /// create (the object did not exist) or an update, and is written with the ownership
    /// the apply computed.
    pub(super) async fn apply(
        &self,
        wo: &WriteOptions,
        config: &Value,
        warnings: &mut Vec<String>,
    ) -> Result<Response<Body>, Failure> {
        let req = self.req;
        let name = req.name.unwrap_or("");
        let retry = config.pointer("/metadata/resourceVersion").is_none();
        let settled = WriteOptions {
            ownership: Ownership::Settled,
            ..wo.clone()
        };
        let dry = WriteOptions {
            dry_run: true,
            ..wo.clone()
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let old = self.stored();
            let applied = ops::apply(
                &mut self.shared.state.lock(),
                &req.info,
                req.version,
                req.ns,
                name,
                config,
                req.sub.part(),
                &dry,
            )?;
            let mut object = self
                .conv
                .convert((*applied.obj).clone(), req.version)
                .await?;
            let old = match old {
                Some(old) if !applied.created => old,
                _ => {
                    let md = meta::metadata_mut(&mut object);
                    for field in ["uid", "creationTimestamp", "generation"] {
                        md.remove(field);
                    }
                    return self.create(object, &settled, warnings).await;
                }
            };
            let old = self.conv.convert((*old).clone(), req.version).await?;
            let opts = options("PatchOptions", req.query, wo.dry_run);
            let mut attrs = self.attributes(
                Operation::Update,
                name,
                Some(object),
                Some(old),
                wo.dry_run,
                opts,
            );
            match self.replace(&mut attrs, &settled, warnings).await {
                Ok(stored) => return self.reply(200, &stored).await,
                Err(f) if retry && f.code == 409 && attempt < ATTEMPTS => {}
                Err(f) => return Err(f),
            }
        }
    }
}
