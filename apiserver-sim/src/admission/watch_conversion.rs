//! A watch stream on a custom resource whose CRD converts through a webhook: the stream is
//! read in the stored version, and each batch of events has its objects converted to the
//! watched version with one `ConversionReview` (bookmarks only change `apiVersion`). A
//! conversion that fails ends the stream with an ERROR event, as a real server's watch ends.

use bytes::{Bytes, BytesMut};
use futures::{Stream, StreamExt};
use serde_json::Value;

use super::conversion::Converter;
use crate::api::repr::to_bytes;
use crate::api::watch_line::push_line;

/// Converts one chunk of watch lines.
async fn convert_chunk(
    converter: &Converter,
    version: &str,
    api_version: &str,
    chunk: &Bytes,
) -> Result<Bytes, Bytes> {
    let mut events: Vec<(String, Value)> = Vec::new();
    for line in chunk.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        let Ok(mut ev) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let kind = crate::machinery::pointer::text(&ev, "/type").to_string();
        let obj = ev.get_mut("object").map(Value::take).unwrap_or(Value::Null);
        events.push((kind, obj));
    }
    let (objects, at): (Vec<Value>, Vec<usize>) = events
        .iter()
        .enumerate()
        .filter(|(_, (k, _))| matches!(k.as_str(), "ADDED" | "MODIFIED" | "DELETED"))
        .map(|(i, (_, o))| (o.clone(), i))
        .unzip();
    match converter.convert_all(objects, version).await {
        Ok(converted) => {
            for (i, obj) in at.into_iter().zip(converted) {
                events[i].1 = obj;
            }
        }
        Err(f) => {
            let mut b = BytesMut::new();
            push_line(&mut b, "ERROR", &to_bytes(&f.status));
            return Err(b.freeze());
        }
    }
    let mut out = BytesMut::with_capacity(chunk.len() + 64);
    for (kind, mut obj) in events {
        if kind == "BOOKMARK"
            && let Some(m) = obj.as_object_mut()
        {
            m.insert("apiVersion".into(), Value::String(api_version.to_string()));
        }
        push_line(&mut out, &kind, &to_bytes(&obj));
    }
    Ok(out.freeze())
}

/// Wraps a stored-version watch stream so that it speaks `version`.
pub fn convert_stream(
    inner: impl Stream<Item = Bytes> + Send + 'static,
    converter: Converter,
    version: String,
    api_version: String,
) -> impl Stream<Item = Bytes> + Send + 'static {
    let inner = Box::pin(inner);
    futures::stream::unfold(Some(inner), move |state| {
        let converter = converter.clone();
        let version = version.clone();
        let api_version = api_version.clone();
        async move {
            let mut inner = state?;
            let chunk = inner.next().await?;
            match convert_chunk(&converter, &version, &api_version, &chunk).await {
                Ok(out) => Some((out, Some(inner))),
                Err(error_line) => Some((error_line, None)),
            }
        }
    })
}
