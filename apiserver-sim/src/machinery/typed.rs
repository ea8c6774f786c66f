//! Typed checks of built-in objects: an object of a built-in kind must decode as its
//! k8s-openapi type, which knows every field's JSON type and which fields are required.
//! Also reads a type's top-level JSON field names (does it have a `spec`, a `status`?)
//! from its own `Deserialize` implementation.

use std::fmt;

use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::Value;

/// Why an object does not decode as its type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypedError {
    /// Dotted path of the offending field as serde reports it (`spec.replicas`,
    /// `spec.containers[0].ports[0].containerPort`); empty for the object itself.
    pub path: String,
    /// serde's message.
    pub message: String,
    /// The name of a required field that is missing (below `path`), if that is the error.
    pub missing: Option<String>,
}

impl TypedError {
    /// The full path of the missing field (`path.missing`), if a field is missing.
    pub fn missing_path(&self) -> Option<String> {
        let field = self.missing.as_deref()?;
        Some(if self.path.is_empty() || self.path == "." {
            field.to_string()
        } else {
            format!("{}.{field}", self.path)
        })
    }
}

/// A typed check: Ok when the object decodes as the type.
pub type Check = fn(&Value) -> Result<(), TypedError>;

/// Decodes `obj` as `T`, reporting where it fails.
pub fn check<T: DeserializeOwned>(obj: &Value) -> Result<(), TypedError> {
    match serde_path_to_error::deserialize::<_, T>(obj) {
        Ok(_) => Ok(()),
        Err(e) => {
            let path = e.path().to_string();
            let message = e.into_inner().to_string();
            let missing = message
                .strip_prefix("missing field `")
                .and_then(|r| r.split('`').next())
                .map(str::to_string);
            Err(TypedError {
                path: if path == "." { String::new() } else { path },
                message,
                missing,
            })
        }
    }
}

/// The top-level JSON field names of a struct type, as its `Deserialize` implementation
/// declares them (empty when the type does not deserialize as a struct).
pub fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut probe = FieldProbe(&[]);
    let _ = T::deserialize(&mut probe);
    probe.0
}

/// A deserializer that only records the field list a struct asks for, then stops.
struct FieldProbe(&'static [&'static str]);

#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field names recorded")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Stop
    }
}

impl<'de> de::Deserializer<'de> for &mut FieldProbe {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Stop> {
        self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    #[test]
    fn reads_field_names() {
        let d = field_names::<Deployment>();
        assert!(d.contains(&"spec") && d.contains(&"status"), "{d:?}");
        let c = field_names::<ConfigMap>();
        assert!(!c.contains(&"status") && c.contains(&"data"), "{c:?}");
    }

    #[test]
    fn reports_path_and_missing_field() {
        let ok = json!({"metadata": {"name": "a"}, "spec": {"selector": {},
            "template": {"spec": {"containers": [{"name": "c"}]}}}});
        assert_eq!(check::<Deployment>(&ok), Ok(()));
        let bad = json!({"spec": {"replicas": "three", "selector": {}, "template": {}}});
        let e = check::<Deployment>(&bad).unwrap_err();
        assert_eq!(e.path, "spec.replicas");
        assert_eq!(e.missing, None);
        // As Go's decoder, k8s-openapi decodes a missing required field as its zero value:
        // required fields are the validation's business.
        assert_eq!(
            check::<Deployment>(&json!({"spec": {"template": {}}})),
            Ok(())
        );
        let e = TypedError {
            path: "spec".into(),
            message: "missing field `selector`".into(),
            missing: Some("selector".into()),
        };
        assert_eq!(e.missing_path().as_deref(), Some("spec.selector"));
    }
}
