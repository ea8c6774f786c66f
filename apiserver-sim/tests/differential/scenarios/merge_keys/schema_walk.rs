//! The lists to probe, found in the simulator's own served OpenAPI v3 documents: every list
//! field of every built-in kind whose schema gives it an `x-kubernetes-patch-merge-key` with
//! the `merge` patch strategy, reached from the kind's schema through `$ref`s, list items and
//! map values (a schema that refers back to itself is walked once on each path). The same
//! documents tell the probes' patches how each field merges.

use std::collections::BTreeMap;

use apiserver_sim::ApiServer;
use serde_json::{Map, Value};

use crate::target;

/// One step of a path from an object's root to one of its lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Into a field.
    Field(String),
    /// Into the items of a list.
    Item,
    /// Into the values of a map.
    Value,
}

/// A served built-in kind.
#[derive(Debug, Clone)]
pub struct Kind {
    /// API group ("" for core).
    pub group: String,
    /// Served version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Whether `/status` is a subresource.
    pub status: bool,
    /// The kind's schema name.
    pub schema: String,
}

impl Kind {
    /// `apiVersion` of the kind.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A list that merges by a key, in one kind.
#[derive(Debug, Clone)]
pub struct MergeList {
    /// The kind.
    pub kind: Kind,
    /// From the object's root to the list (its own field last).
    pub path: Vec<Step>,
    /// The merge key.
    pub key: String,
    /// The schema name of the items.
    pub item: String,
}

impl MergeList {
    /// The path as `spec.template.spec.containers[*].env`.
    pub fn dotted(&self) -> String {
        let mut out = String::new();
        for step in &self.path {
            match step {
                Step::Field(f) if out.is_empty() => out.push_str(f),
                Step::Field(f) => {
                    out.push('.');
                    out.push_str(f);
                }
                Step::Item => out.push_str("[*]"),
                Step::Value => out.push_str(".*"),
            }
        }
        out
    }
}

/// How a field merges, as a served schema says.
#[derive(Debug, Clone, Default)]
pub struct Field {
    /// `x-kubernetes-patch-strategy` (`merge`, `retainKeys`, `merge,retainKeys`, `replace`).
    pub strategy: String,
    /// `x-kubernetes-patch-merge-key`.
    pub key: Option<String>,
    /// The schema of the value, the items of a list or the values of a map.
    pub target: Option<String>,
    /// Whether the field is a map of `target`s.
    pub map: bool,
}

impl Field {
    /// Whether the strategy includes `s`.
    pub fn has(&self, s: &str) -> bool {
        self.strategy.split(',').any(|p| p == s)
    }
}

/// The component schemas of every served group version, by name.
#[derive(Default)]
pub struct Schemas(Map<String, Value>);

fn referred(v: &Value) -> Option<String> {
    let r = |v: &Value| {
        v.get("$ref")
            .or_else(|| v.pointer("/allOf/0/$ref"))
            .and_then(Value::as_str)
            .map(|r| r.trim_start_matches("#/components/schemas/").to_string())
    };
    r(v).or_else(|| v.get("items").and_then(r))
        .or_else(|| v.get("additionalProperties").and_then(r))
}

impl Schemas {
    /// Field `name` of schema `schema`.
    pub fn field(&self, schema: &str, name: &str) -> Option<Field> {
        let f = self.0.get(schema)?.get("properties")?.get(name)?;
        Some(Field {
            strategy: f["x-kubernetes-patch-strategy"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            key: f["x-kubernetes-patch-merge-key"]
                .as_str()
                .map(str::to_string),
            target: referred(f),
            map: f.get("additionalProperties").is_some(),
        })
    }

    fn fields(&self, schema: &str) -> Vec<String> {
        self.0
            .get(schema)
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// Reads the simulator's served OpenAPI documents and discovery: the schemas and every list
/// that merges by a key, by kind (in `apiVersion/Kind` order).
pub async fn walk() -> Result<(Schemas, Vec<MergeList>), String> {
    let sim = ApiServer::start().await.map_err(|e| e.to_string())?;
    let client = sim.client().map_err(|e| e.to_string())?;
    let get = |path: String| {
        let client = client.clone();
        async move {
            let r = target::send(&client, "GET", &path, &[], Vec::new()).await?;
            serde_json::from_slice::<Value>(&r.body).map_err(|e| format!("{path}: {e}"))
        }
    };
    let index = get("/openapi/v3".into()).await?;
    let mut schemas = Schemas::default();
    let mut kinds = BTreeMap::new();
    for (gv, doc) in index["paths"].as_object().into_iter().flatten() {
        let Some(gv) = gv.strip_prefix("api/").or_else(|| gv.strip_prefix("apis/")) else {
            continue;
        };
        let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
        let url = doc["serverRelativeURL"].as_str().unwrap_or_default();
        let doc = get(url.to_string()).await?;
        let discovery = get(if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        })
        .await?;
        let resources = discovery["resources"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (name, schema) in doc["components"]["schemas"]
            .as_object()
            .into_iter()
            .flatten()
        {
            schemas.0.insert(name.clone(), schema.clone());
            let gvk = &schema["x-kubernetes-group-version-kind"][0];
            if gvk["group"] != group || gvk["version"] != version {
                continue;
            }
            let kind = gvk["kind"].as_str().unwrap_or_default();
            let Some(resource) = resources.iter().find(|r| {
                r["kind"] == kind
                    && r["name"].as_str().is_some_and(|n| !n.contains('/'))
                    && r["verbs"]
                        .as_array()
                        .is_some_and(|v| v.contains(&"create".into()))
            }) else {
                continue;
            };
            let plural = resource["name"].as_str().unwrap_or_default().to_string();
            let status = resources
                .iter()
                .any(|r| r["name"] == format!("{plural}/status"));
            let k = Kind {
                group: group.to_string(),
                version: version.to_string(),
                kind: kind.to_string(),
                plural,
                namespaced: resource["namespaced"].as_bool().unwrap_or(false),
                status,
                schema: name.clone(),
            };
            kinds.insert(format!("{}/{kind}", k.api_version()), k);
        }
    }
    let mut lists = Vec::new();
    for kind in kinds.into_values() {
        let schema = kind.schema.clone();
        let mut path = Vec::new();
        lists_of(
            &schemas,
            &kind,
            &schema,
            &mut path,
            &mut vec![schema.clone()],
            &mut lists,
        );
    }
    Ok((schemas, lists))
}

fn lists_of(
    schemas: &Schemas,
    kind: &Kind,
    schema: &str,
    path: &mut Vec<Step>,
    seen: &mut Vec<String>,
    out: &mut Vec<MergeList>,
) {
    for name in schemas.fields(schema) {
        let Some(field) = schemas.field(schema, &name) else {
            continue;
        };
        let list = schemas.0[schema]["properties"][&name]["type"] == "array";
        path.push(Step::Field(name));
        if let (true, Some(key), Some(item)) =
            (list && field.has("merge"), &field.key, &field.target)
        {
            out.push(MergeList {
                kind: kind.clone(),
                path: path.clone(),
                key: key.clone(),
                item: item.clone(),
            });
        }
        if let Some(target) = field.target.filter(|t| !seen.contains(t)) {
            let step = if list {
                Some(Step::Item)
            } else if field.map {
                Some(Step::Value)
            } else {
                None
            };
            let deeper = step.is_some();
            path.extend(step);
            seen.push(target.clone());
            lists_of(schemas, kind, &target, path, seen, out);
            seen.pop();
            if deeper {
                path.pop();
            }
        }
        path.pop();
    }
}
