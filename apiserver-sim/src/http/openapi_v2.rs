//! `/openapi/v2`: one Swagger 2.0 document of everything served, made from the OpenAPI v3
//! documents of the group versions (their schemas as `definitions`, their paths and
//! operations). JSON only: a client that accepts only upstream's protobuf form gets 406 with
//! an empty body, as upstream answers media types it does not serve there.

use http::{HeaderMap, header};
use serde_json::{Map, Value, json};

use super::discovery::{openapi_doc, served_group_versions, with_builtin_schemas};
use crate::kinds::KUBE_MINOR;
use crate::store::State;

/// Whether the `Accept` header allows a JSON answer.
pub(super) fn accepts_json(headers: &HeaderMap) -> bool {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return true;
    };
    accept.split(',').any(|clause| {
        let media = clause.split(';').next().unwrap_or("").trim();
        matches!(media, "" | "*/*" | "application/*" | "application/json")
    })
}

/// The group versions' v3 documents as the store makes them (to complete with
/// [`with_builtin_schemas`] outside its lock): (group, version, document).
pub(super) fn store_documents(st: &State) -> Vec<(String, String, Value)> {
    served_group_versions(st)
        .into_iter()
        .filter_map(|(g, v)| openapi_doc(st, &g, &v).map(|doc| (g, v, doc)))
        .collect()
}

/// The Swagger 2.0 document made of the group versions' v3 documents, built-in schemas added.
pub(super) fn document(store_docs: Vec<(String, String, Value)>) -> Value {
    let v3_docs: Vec<Value> = store_docs
        .into_iter()
        .map(|(group, version, doc)| with_builtin_schemas(doc, &group, &version))
        .collect();
    let mut definitions = Map::new();
    let mut paths = Map::new();
    for doc in &v3_docs {
        if let Some(schemas) = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
        {
            for (name, schema) in schemas {
                definitions
                    .entry(name.clone())
                    .or_insert_with(|| v2_refs(schema.clone()));
            }
        }
        if let Some(items) = doc.get("paths").and_then(Value::as_object) {
            for (path, item) in items {
                paths.insert(path.clone(), v2_path_item(item));
            }
        }
    }
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": format!("v1.{KUBE_MINOR}.0-sim")},
        "paths": paths,
        "definitions": definitions,
    })
}

/// A schema with its references pointing into `definitions`.
fn v2_refs(mut schema: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get_mut("$ref")
                    && let Some(name) = r.strip_prefix("#/components/schemas/")
                {
                    *r = format!("#/definitions/{name}");
                }
                m.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut schema);
    schema
}

/// A v3 path item's operations in v2 form: the same marks and responses, query parameters
/// typed directly, no request bodies (v2 declares bodies as parameters; none are described).
fn v2_path_item(item: &Value) -> Value {
    let mut out = Map::new();
    for (method, op) in item.as_object().into_iter().flatten() {
        let mut op = op.clone();
        if let Some(m) = op.as_object_mut() {
            m.remove("requestBody");
            if let Some(Value::Array(params)) = m.get_mut("parameters") {
                for p in params.iter_mut().filter_map(Value::as_object_mut) {
                    if let Some(schema) = p.remove("schema") {
                        p.insert(
                            "type".into(),
                            schema.get("type").cloned().unwrap_or(json!("string")),
                        );
                    }
                }
            }
        }
        out.insert(method.clone(), op);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_definitions_and_paths_from_v3_documents() {
        let v3 = json!({
            "paths": {"/apis/g/v1/xs/{name}": {"patch": {
                "parameters": [{"name": "dryRun", "in": "query", "schema": {"type": "string"}}],
                "requestBody": {}, "responses": {"200": {"description": "OK"}}}}},
            "components": {"schemas": {
                "g.v1.X": {"type": "object", "properties": {"metadata": {
                    "allOf": [{"$ref": "#/components/schemas/meta.ObjectMeta"}]}}},
                "meta.ObjectMeta": {"type": "object"}}},
        });
        let doc = document(vec![("g".into(), "v1".into(), v3)]);
        assert_eq!(doc["swagger"], "2.0");
        assert_eq!(
            doc["definitions"]["g.v1.X"]["properties"]["metadata"]["allOf"][0]["$ref"],
            "#/definitions/meta.ObjectMeta"
        );
        let patch = &doc["paths"]["/apis/g/v1/xs/{name}"]["patch"];
        assert!(patch.get("requestBody").is_none());
        assert_eq!(patch["parameters"][0]["type"], "string");
    }

    #[test]
    fn json_is_what_most_clients_accept() {
        let with = |accept: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, accept.parse().expect("header value"));
            accepts_json(&h)
        };
        assert!(accepts_json(&HeaderMap::new()));
        assert!(with("application/json"));
        assert!(with(
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, */*"
        ));
        assert!(!with(
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
        ));
    }
}
