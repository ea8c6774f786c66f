//! Reading a compact object from the wire: the object's JSON captured as is, and from it only
//! the lean metadata (one targeted pass: the members before `metadata` are skipped, those after
//! it are not read again).

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::json_text::{key_text, skip_whitespace, string_end, value_end};

/// Where a member (`"key": value`) lies in an object's JSON text: `start..end`, from the key's
/// opening quote to the end of the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) end: u32,
    /// The same key appears again later in the object (malformed, but JSON allows it: a
    /// typed decoder keeps the last one).
    pub(crate) repeated: bool,
}

/// The lean metadata of an object and where its `metadata.managedFields` member lies.
pub(crate) struct Scanned {
    pub(crate) meta: ObjectMeta,
    pub(crate) managed_fields: Option<Span>,
}

/// Reads the lean metadata of the JSON object `text` (already validated as JSON): name,
/// namespace, uid, resourceVersion, generation, labels, ownerReferences, deletionTimestamp and
/// finalizers, nothing else. Fails when `text` is not an object or its metadata has a wrong type.
pub(crate) fn scan(text: &str) -> Result<Scanned, serde_json::Error> {
    match metadata_start(text)? {
        Some(at) => {
            let rest = text.get(at..).unwrap_or_default();
            let seed = MetaSeed {
                base: text.as_ptr() as usize,
                len: text.len(),
            };
            let mut de = serde_json::Deserializer::from_str(rest);
            seed.deserialize(&mut de)
        }
        None => Ok(Scanned {
            meta: ObjectMeta::default(),
            managed_fields: None,
        }),
    }
}

/// Where the value of the object's top-level `metadata` member starts, if it has one (the last
/// one if the key is repeated, as typed decoding keeps the last: so every member is skipped
/// over, at the cost of one scan of the rest).
fn metadata_start(text: &str) -> Result<Option<usize>, serde_json::Error> {
    let bytes = text.as_bytes();
    let mut at = skip_whitespace(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err(de::Error::invalid_type(
            de::Unexpected::Other("a JSON value that is not an object"),
            &"a Kubernetes object",
        ));
    }
    at += 1;
    let mut metadata = None;
    loop {
        at = skip_whitespace(bytes, at);
        match bytes.get(at) {
            Some(b',') => at = skip_whitespace(bytes, at + 1),
            Some(b'}') | None => return Ok(metadata),
            Some(_) => {}
        }
        let key_end = string_end(bytes, at)
            .ok_or_else(|| <serde_json::Error as de::Error>::custom("a member key was expected"))?;
        let key = key_text(text.get(at..key_end).unwrap_or_default())?;
        // Past the key, its `:` and the whitespace around it.
        at = skip_whitespace(bytes, skip_whitespace(bytes, key_end) + 1);
        if key == "metadata" {
            metadata = Some(at);
        }
        at = value_end(text, at)?;
    }
}

/// Deserializes the metadata value; `base` and `len` locate the whole object's text, so that
/// the span of `managedFields` can be given relative to it.
struct MetaSeed {
    base: usize,
    len: usize,
}

impl<'de> DeserializeSeed<'de> for MetaSeed {
    type Value = Scanned;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Scanned, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for MetaSeed {
    type Value = Scanned;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object's metadata")
    }

    fn visit_none<E: de::Error>(self) -> Result<Scanned, E> {
        Ok(Scanned {
            meta: ObjectMeta::default(),
            managed_fields: None,
        })
    }

    fn visit_unit<E: de::Error>(self) -> Result<Scanned, E> {
        self.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Scanned, D::Error> {
        deserializer.deserialize_map(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scanned, A::Error> {
        let mut meta = ObjectMeta::default();
        let mut managed_fields = None;
        while let Some(key) = map.next_key::<&'de RawValue>()? {
            let name = key_text(key.get()).map_err(de::Error::custom)?;
            match &*name {
                "name" => meta.name = map.next_value()?,
                "namespace" => meta.namespace = map.next_value()?,
                "uid" => meta.uid = map.next_value()?,
                "resourceVersion" => meta.resource_version = map.next_value()?,
                "generation" => meta.generation = map.next_value()?,
                "labels" => meta.labels = map.next_value()?,
                "ownerReferences" => meta.owner_references = map.next_value()?,
                "deletionTimestamp" => meta.deletion_timestamp = map.next_value()?,
                "finalizers" => meta.finalizers = map.next_value()?,
                "managedFields" => {
                    let value = map.next_value::<&'de RawValue>()?;
                    match &mut managed_fields {
                        Some(Span { repeated, .. }) => *repeated = true,
                        None => managed_fields = self.span(key.get(), value.get()),
                    }
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        // serde grows these lists as they fill (room for four owners, say, for one).
        meta.owner_references
            .iter_mut()
            .for_each(Vec::shrink_to_fit);
        meta.finalizers.iter_mut().for_each(Vec::shrink_to_fit);
        Ok(Scanned {
            meta,
            managed_fields,
        })
    }
}

impl MetaSeed {
    /// The span from `key` to the end of `value`, both borrowed from the object's text.
    fn span(&self, key: &str, value: &str) -> Option<Span> {
        let start = (key.as_ptr() as usize).checked_sub(self.base)?;
        let end = (value.as_ptr() as usize + value.len()).checked_sub(self.base)?;
        (start < end && end <= self.len).then_some(Span {
            start: u32::try_from(start).ok()?,
            end: u32::try_from(end).ok()?,
            repeated: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_the_lean_fields_and_locates_managed_fields() {
        let text = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","annotations":{"x":"y"},"managedFields":[{"manager":"m"}],"labels":{"app":"web"},"generation":3},"spec":{"x":1}}"#;
        let scanned = scan(text).unwrap();
        assert_eq!(scanned.meta.name.as_deref(), Some("a"));
        assert_eq!(scanned.meta.namespace.as_deref(), Some("ns"));
        assert_eq!(scanned.meta.generation, Some(3));
        assert!(scanned.meta.annotations.is_none());
        assert_eq!(scanned.meta.labels.unwrap()["app"], "web");
        let span = scanned.managed_fields.unwrap();
        assert_eq!(
            &text[span.start as usize..span.end as usize],
            r#""managedFields":[{"manager":"m"}]"#
        );
    }

    #[test]
    fn objects_without_metadata_have_empty_metadata_and_non_objects_fail() {
        assert!(scan(r#"{"kind":"X"}"#).unwrap().meta.name.is_none());
        assert!(scan(r#"{"metadata":null}"#).unwrap().meta.name.is_none());
        assert!(scan("[1]").is_err());
        assert!(scan(r#"{"metadata":{"name":7}}"#).is_err());
        assert!(scan(r#"{"metadata":"x"}"#).is_err());
    }
}
