//! `meta.k8s.io` `Table` responses, as `kubectl get` asks for them (upstream
//! `handlers/response.go` `asTable` and the watch encoder): the columns and rows of the
//! resource's printer (`kinds/printers/`), the list's `resourceVersion` and `continue` (or
//! the object's `resourceVersion`), and per row the object as `includeObject` asks:
//! `Metadata` (default, a `PartialObjectMetadata`), `Object` (the full object) or `None`.
//! A watch sends its column definitions with its first event only.

use std::sync::Arc;

use bytes::{BufMut, Bytes, BytesMut};
use jiff::Timestamp;
use serde_json::{Value, json};

use super::repr::{self, Repr, TableVersion, to_bytes};
use crate::kinds::printers::{Column, Printer};
use crate::machinery::query::Query;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{ApiError, ApiResult};

/// What each row carries as its `object` (`TableOptions.includeObject`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    /// `null`.
    None,
    /// A `PartialObjectMetadata` (the default).
    Metadata,
    /// The full object, in the requested version.
    Object,
}

impl IncludeObject {
    /// Reads `includeObject` from the query; 400 for an unknown value.
    pub fn parse(q: &Query) -> ApiResult<Self> {
        match q.get("includeObject").unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(ApiError::bad_request(format!(
                "Unable to convert to Table as requested: includeObject: Unsupported value: \
                 {other:?}: supported values: \"Metadata\", \"None\", \"Object\""
            ))),
        }
    }
}

/// Renders the tables of one request (or one watch).
pub struct TableWriter {
    printer: Printer,
    include: IncludeObject,
    version: TableVersion,
    info: Arc<ResourceInfo>,
    served: String,
    /// Row objects go out as given (a `Scale`), not converted to the resource's version.
    as_given: bool,
}

impl TableWriter {
    /// The writer of a resource's tables at a served version; 400 for a bad
    /// `includeObject`.
    pub fn new(
        info: Arc<ResourceInfo>,
        served: &str,
        version: TableVersion,
        q: &Query,
    ) -> ApiResult<Self> {
        Ok(Self {
            printer: Printer::for_resource(&info, served),
            include: IncludeObject::parse(q)?,
            version,
            info,
            served: served.to_string(),
            as_given: false,
        })
    }

    /// The writer of `Scale` subresource tables.
    pub fn for_scale(
        info: Arc<ResourceInfo>,
        served: &str,
        version: TableVersion,
        q: &Query,
    ) -> ApiResult<Self> {
        let mut w = Self::new(info, served, version, q)?;
        w.printer = Printer::Scale;
        w.as_given = true;
        Ok(w)
    }

    /// Whether the columns go out on every watch event, not just the first.
    pub fn always_headers(&self) -> bool {
        self.printer.always_headers()
    }

    fn head(&self, buf: &mut BytesMut, md: &Value, headers: bool) {
        buf.extend_from_slice(b"{\"kind\":\"Table\",\"apiVersion\":");
        push_str(buf, self.version.api_version());
        buf.extend_from_slice(b",\"metadata\":");
        buf.extend_from_slice(&to_bytes(md));
        buf.extend_from_slice(b",\"columnDefinitions\":");
        if headers {
            buf.put_u8(b'[');
            for (i, c) in self.printer.columns().iter().enumerate() {
                if i > 0 {
                    buf.put_u8(b',');
                }
                push_column(buf, c);
            }
            buf.put_u8(b']');
        } else {
            buf.extend_from_slice(b"null");
        }
        buf.extend_from_slice(b",\"rows\":");
    }

    fn row(&self, buf: &mut BytesMut, obj: &Value, cached: &Bytes, now: Timestamp) {
        let row = self.printer.row(obj, now);
        buf.extend_from_slice(b"{\"cells\":");
        buf.extend_from_slice(&serde_json::to_vec(&row.cells).unwrap_or_default());
        if !row.conditions.is_empty() {
            buf.extend_from_slice(b",\"conditions\":");
            buf.extend_from_slice(&serde_json::to_vec(&row.conditions).unwrap_or_default());
        }
        buf.extend_from_slice(b",\"object\":");
        match self.include {
            IncludeObject::None => buf.extend_from_slice(b"null"),
            IncludeObject::Metadata => buf.extend_from_slice(&to_bytes(&json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": self.version.api_version(),
                "metadata": obj.get("metadata").cloned().unwrap_or_else(|| json!({})),
            }))),
            IncludeObject::Object if self.as_given => buf.extend_from_slice(&to_bytes(obj)),
            IncludeObject::Object => buf.extend_from_slice(&repr::render_cached(
                &self.info,
                &self.served,
                obj,
                cached,
                Repr::Full,
            )),
        }
        buf.put_u8(b'}');
    }

    /// A table of one object (a get, a write's answer, a watch event): its
    /// `resourceVersion`, the columns when `headers`, one row.
    pub fn object(&self, obj: &Value, headers: bool) -> Bytes {
        let mut buf = BytesMut::with_capacity(1024);
        let rv = crate::machinery::meta::resource_version(obj);
        let md = if rv.is_empty() {
            json!({})
        } else {
            json!({"resourceVersion": rv})
        };
        self.head(&mut buf, &md, headers || self.always_headers());
        buf.put_u8(b'[');
        self.row(&mut buf, obj, &Bytes::new(), Timestamp::now());
        buf.extend_from_slice(b"]}");
        buf.freeze()
    }

    /// A table of a list: the list metadata `md`, the columns, one row per item (given with
    /// its stored encoding, empty when unknown).
    pub fn list<'a>(
        &self,
        items: impl ExactSizeIterator<Item = (&'a Value, &'a Bytes)>,
        md: &Value,
    ) -> Bytes {
        let now = Timestamp::now();
        let mut buf = BytesMut::with_capacity(256 + items.len() * 512);
        self.head(&mut buf, md, true);
        if items.len() == 0 && self.printer.null_when_empty() {
            buf.extend_from_slice(b"null}");
            return buf.freeze();
        }
        buf.put_u8(b'[');
        for (i, (obj, cached)) in items.enumerate() {
            if i > 0 {
                buf.put_u8(b',');
            }
            self.row(&mut buf, obj, cached, now);
        }
        buf.extend_from_slice(b"]}");
        buf.freeze()
    }
}

fn push_str(buf: &mut BytesMut, s: &str) {
    buf.extend_from_slice(&serde_json::to_vec(s).unwrap_or_default());
}

/// `{"name","type","format","description","priority"}`, in upstream's field order.
fn push_column(buf: &mut BytesMut, c: &Column) {
    buf.extend_from_slice(b"{\"name\":");
    push_str(buf, &c.name);
    buf.extend_from_slice(b",\"type\":");
    push_str(buf, &c.ty);
    buf.extend_from_slice(b",\"format\":");
    push_str(buf, &c.format);
    buf.extend_from_slice(b",\"description\":");
    push_str(buf, &c.description);
    buf.extend_from_slice(b",\"priority\":");
    buf.extend_from_slice(c.priority.to_string().as_bytes());
    buf.put_u8(b'}');
}
