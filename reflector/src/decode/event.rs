//! Decoding one watch-event line, `{"type": T, "object": O}`, into a `WatchEvent<K>` in one
//! pass: the object is deserialized straight into `K` (or `Bookmark`, or `Status` for ERROR)
//! as soon as the type is known, without serde's buffered adjacently-tagged representation.
//!
//! The API server writes `type` before `object`; if a line has them the other way round, the
//! object is kept as borrowed raw JSON and decoded once the type is read.

use std::fmt;
use std::marker::PhantomData;

use kube::api::WatchEvent;
use kube::core::Status;
use kube::core::watch::Bookmark;
use serde::de::{self, DeserializeOwned, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::error::{WatchDecodeError, excerpt};

/// The five event types of a watch stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventType {
    Added,
    Modified,
    Deleted,
    Bookmark,
    Error,
}

/// The value of `type`: one of the five, or an unknown name kept for the error message.
enum TypeName {
    Known(EventType),
    Unknown(String),
}

impl TypeName {
    fn from_str(name: &str) -> Self {
        match name {
            "ADDED" => TypeName::Known(EventType::Added),
            "MODIFIED" => TypeName::Known(EventType::Modified),
            "DELETED" => TypeName::Known(EventType::Deleted),
            "BOOKMARK" => TypeName::Known(EventType::Bookmark),
            "ERROR" => TypeName::Known(EventType::Error),
            other => TypeName::Unknown(other.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for TypeName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TypeNameVisitor;
        impl Visitor<'_> for TypeNameVisitor {
            type Value = TypeName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a watch event type string")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<TypeName, E> {
                Ok(TypeName::from_str(name))
            }
        }
        deserializer.deserialize_str(TypeNameVisitor)
    }
}

/// The envelope's keys; any other key is ignored.
enum Field {
    Type,
    Object,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a watch event field name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Field, E> {
                Ok(match name {
                    "type" => Field::Type,
                    "object" => Field::Object,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}

/// What the envelope visitor found.
enum Envelope<'de, K> {
    /// Type first, object decoded on the way.
    Event(WatchEvent<K>),
    /// Object before type: decoded afterwards from its raw JSON.
    Deferred(EventType, &'de RawValue),
    /// A type this decoder does not know; the object (if any) was skipped.
    Unknown(String),
}

/// Decodes the object of a known event type from the map's next value.
fn next_event<'de, A, K>(map: &mut A, event_type: EventType) -> Result<WatchEvent<K>, A::Error>
where
    A: MapAccess<'de>,
    K: DeserializeOwned,
{
    Ok(match event_type {
        EventType::Added => WatchEvent::Added(map.next_value()?),
        EventType::Modified => WatchEvent::Modified(map.next_value()?),
        EventType::Deleted => WatchEvent::Deleted(map.next_value()?),
        EventType::Bookmark => WatchEvent::Bookmark(map.next_value::<Bookmark>()?),
        EventType::Error => WatchEvent::Error(Box::new(map.next_value::<Status>()?)),
    })
}

/// Decodes the object of a known event type from raw JSON.
fn raw_event<K: DeserializeOwned>(
    event_type: EventType,
    raw: &RawValue,
) -> serde_json::Result<WatchEvent<K>> {
    let json = raw.get();
    Ok(match event_type {
        EventType::Added => WatchEvent::Added(serde_json::from_str(json)?),
        EventType::Modified => WatchEvent::Modified(serde_json::from_str(json)?),
        EventType::Deleted => WatchEvent::Deleted(serde_json::from_str(json)?),
        EventType::Bookmark => WatchEvent::Bookmark(serde_json::from_str(json)?),
        EventType::Error => WatchEvent::Error(Box::new(serde_json::from_str(json)?)),
    })
}

struct EnvelopeVisitor<K>(PhantomData<fn() -> K>);

impl<'de, K: DeserializeOwned> Visitor<'de> for EnvelopeVisitor<K> {
    type Value = Envelope<'de, K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(r#"a watch event object {"type": ..., "object": ...}"#)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut event_type: Option<TypeName> = None;
        let mut event: Option<WatchEvent<K>> = None;
        let mut deferred: Option<&'de RawValue> = None;
        let mut object_seen = false;
        while let Some(field) = map.next_key::<Field>()? {
            match field {
                Field::Type if event_type.is_some() => {
                    return Err(de::Error::duplicate_field("type"));
                }
                Field::Type => event_type = Some(map.next_value()?),
                Field::Object if object_seen => return Err(de::Error::duplicate_field("object")),
                Field::Object => {
                    object_seen = true;
                    match &event_type {
                        Some(TypeName::Known(known)) => event = Some(next_event(&mut map, *known)?),
                        Some(TypeName::Unknown(_)) => {
                            map.next_value::<IgnoredAny>()?;
                        }
                        None => deferred = Some(map.next_value()?),
                    }
                }
                Field::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        match (event_type, event, deferred) {
            (None, _, _) => Err(de::Error::missing_field("type")),
            (Some(TypeName::Unknown(name)), _, _) => Ok(Envelope::Unknown(name)),
            (Some(TypeName::Known(_)), Some(event), _) => Ok(Envelope::Event(event)),
            (Some(TypeName::Known(known)), None, Some(raw)) => Ok(Envelope::Deferred(known, raw)),
            (Some(TypeName::Known(_)), None, None) => Err(de::Error::missing_field("object")),
        }
    }
}

/// Decodes one complete watch-event line (without its newline) into a `WatchEvent<K>`.
///
/// `ERROR` events carry the server's `metav1.Status` (a 410 `Expired` among them). An unknown
/// `type` is [`WatchDecodeError::UnknownType`]; anything else that does not decode (bad JSON,
/// a missing field, an object that is not a `K`, trailing data) is
/// [`WatchDecodeError::Malformed`]. Both name a short excerpt of the line.
pub fn decode_watch_event<K: DeserializeOwned>(
    line: &[u8],
) -> Result<WatchEvent<K>, WatchDecodeError> {
    // Validating the UTF-8 of the whole line at once and then parsing it as text is faster than
    // letting the parser validate every string as it goes. Invalid UTF-8 takes the byte
    // parser, which reports where it is.
    let decoded = match std::str::from_utf8(line) {
        Ok(text) => decode_with::<K, _>(serde_json::Deserializer::from_str(text)),
        Err(_) => decode_with::<K, _>(serde_json::Deserializer::from_slice(line)),
    };
    decoded.map_err(|error| match error {
        LineError::Json(source) => WatchDecodeError::Malformed {
            source,
            excerpt: excerpt(line),
        },
        LineError::UnknownType(event_type) => WatchDecodeError::UnknownType {
            event_type,
            excerpt: excerpt(line),
        },
    })
}

/// Why a line did not decode, before the excerpt is added.
enum LineError {
    Json(serde_json::Error),
    UnknownType(String),
}

/// Decodes the one JSON value `deserializer` reads as a watch event.
fn decode_with<'de, K, R>(
    mut deserializer: serde_json::Deserializer<R>,
) -> Result<WatchEvent<K>, LineError>
where
    K: DeserializeOwned,
    R: serde_json::de::Read<'de>,
{
    let envelope = deserializer
        .deserialize_map(EnvelopeVisitor::<K>(PhantomData))
        .map_err(LineError::Json)?;
    deserializer.end().map_err(LineError::Json)?;
    match envelope {
        Envelope::Event(event) => Ok(event),
        Envelope::Deferred(event_type, raw) => raw_event(event_type, raw).map_err(LineError::Json),
        Envelope::Unknown(event_type) => Err(LineError::UnknownType(event_type)),
    }
}

#[cfg(test)]
mod tests {
    use kube::api::DynamicObject;

    use super::*;

    fn decode(line: &str) -> Result<WatchEvent<DynamicObject>, WatchDecodeError> {
        decode_watch_event(line.as_bytes())
    }

    fn name(event: &WatchEvent<DynamicObject>) -> Option<&str> {
        match event {
            WatchEvent::Added(obj) | WatchEvent::Modified(obj) | WatchEvent::Deleted(obj) => {
                obj.metadata.name.as_deref()
            }
            _ => None,
        }
    }

    const OBJECT: &str =
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"}}"#;

    #[test]
    fn decodes_the_three_object_events() {
        for (event_type, check) in [
            (
                "ADDED",
                (|e| matches!(e, WatchEvent::Added(_))) as fn(&_) -> bool,
            ),
            ("MODIFIED", |e| matches!(e, WatchEvent::Modified(_))),
            ("DELETED", |e| matches!(e, WatchEvent::Deleted(_))),
        ] {
            let event = decode(&format!(r#"{{"type":"{event_type}","object":{OBJECT}}}"#)).unwrap();
            assert!(check(&event), "{event_type}: {event:?}");
            assert_eq!(name(&event), Some("a"));
        }
    }

    #[test]
    fn decodes_an_object_that_precedes_its_type_and_ignores_other_fields() {
        let event = decode(&format!(
            r#"{{"extra":[1,{{}}],"object":{OBJECT},"type":"DELETED"}}"#
        ))
        .unwrap();
        assert!(matches!(event, WatchEvent::Deleted(_)));
        assert_eq!(name(&event), Some("a"));
    }

    #[test]
    fn decodes_bookmarks_with_their_annotations() {
        let line = r#"{"type":"BOOKMARK","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}}"#;
        let Ok(WatchEvent::Bookmark(bookmark)) = decode(line) else {
            panic!("not a bookmark");
        };
        assert_eq!(bookmark.metadata.resource_version, "12");
        assert_eq!(
            bookmark.metadata.annotations["k8s.io/initial-events-end"],
            "true"
        );
    }

    #[test]
    fn decodes_error_events_into_their_status() {
        let line = r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (17)","reason":"Expired","code":410}}"#;
        let Ok(WatchEvent::Error(status)) = decode(line) else {
            panic!("not an error event");
        };
        assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    }

    #[test]
    fn names_an_unknown_type() {
        let err = decode(&format!(r#"{{"type":"RENAMED","object":{OBJECT}}}"#)).unwrap_err();
        assert!(
            matches!(&err, WatchDecodeError::UnknownType { event_type, .. } if event_type == "RENAMED"),
            "{err:?}"
        );
        assert!(err.to_string().contains("RENAMED"), "{err}");
    }

    #[test]
    fn reports_malformed_lines_with_an_excerpt() {
        for line in [
            r#"{"type":"ADDED","object":{"metadata":"#,
            r#"{"type":"ADDED"}"#,
            r#"{"object":{}}"#,
            r#"{"type":"ADDED","object":{},"type":"ADDED"}"#,
            r#"{"type":"ADDED","object":5}"#,
            r#"{"type":"ADDED","object":{"metadata":{}}} trailing"#,
            r#"[1,2]"#,
            "not json",
        ] {
            let err = decode(line).unwrap_err();
            assert!(
                matches!(err, WatchDecodeError::Malformed { .. }),
                "{line}: {err:?}"
            );
            let prefix: String = line.chars().take(8).collect();
            assert!(err.to_string().contains(&prefix), "{line}: {err}");
        }
    }

    #[test]
    fn an_object_of_another_kind_does_not_decode_as_a_typed_resource() {
        let line = r#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"Secret","metadata":{"name":"a"}}}"#;
        let err = decode_watch_event::<k8s_openapi::api::core::v1::ConfigMap>(line.as_bytes())
            .unwrap_err();
        assert!(matches!(err, WatchDecodeError::Malformed { .. }), "{err:?}");
        assert!(crate::Error::from(err).is_skippable_object());
    }

    #[test]
    fn reports_invalid_utf8_as_malformed() {
        let line = b"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\"}}}";
        let err = decode_watch_event::<DynamicObject>(line).unwrap_err();
        assert!(matches!(err, WatchDecodeError::Malformed { .. }), "{err:?}");
        assert!(err.to_string().contains("\u{fffd}"), "{err}");
    }
}
