//! The OpenAPI v3 schema definitions of a built-in kind's k8s-openapi type: with the `explain`
//! feature, which turns on k8s-openapi's `schemars` implementations (their field descriptions
//! are the Kubernetes API reference's), the type's schema and every schema it refers to;
//! without it, none. The OpenAPI documents publish them (`http/openapi_schemas.rs`).

use serde_json::{Map, Value};

/// A type's OpenAPI schema name and the schema definitions it needs: its own and every
/// schema it refers to (`#/components/schemas/<name>`), by name.
pub(crate) type Definitions = Option<(String, Map<String, Value>)>;

/// A type whose OpenAPI schema definitions may be known.
pub(crate) trait Described {
    /// The type's schema name and definitions; `None` without the `explain` feature.
    fn definitions() -> Definitions;
}

#[cfg(feature = "explain")]
impl<T: schemars::JsonSchema> Described for T {
    fn definitions() -> Definitions {
        let mut generator = schemars::generate::SchemaSettings::openapi3().into_generator();
        generator.subschema_for::<T>();
        Some((
            T::schema_name().into_owned(),
            generator.take_definitions(true),
        ))
    }
}

#[cfg(not(feature = "explain"))]
impl<T> Described for T {
    fn definitions() -> Definitions {
        None
    }
}
