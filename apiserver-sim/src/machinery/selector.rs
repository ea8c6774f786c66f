//! Label and field selectors for list, watch and deletecollection.

use std::fmt;

use serde_json::{Map, Value};

use super::label_parser::LabelReq;
use crate::machinery::meta;
use crate::machinery::status::{ApiError, ApiResult};

/// A parsed `labelSelector`: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<LabelReq>);

impl LabelSelector {
    /// Parses the `labelSelector` query syntax (`k=v`, `k!=v`, `k in (a,b)`, `k notin (a)`,
    /// `k`, `!k`, `k>n`, `k<n`); 400 with upstream's message when it does not parse.
    pub fn parse(s: &str) -> ApiResult<Self> {
        super::label_parser::parse(s)
            .map(Self)
            .map_err(ApiError::bad_request)
    }

    /// True when no requirement is present.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// A `metav1.LabelSelector` object (`matchLabels` and `matchExpressions`) as a selector;
    /// None when it is malformed (an unknown operator, a value that is not a string).
    pub fn from_object(sel: &Value) -> Option<Self> {
        let mut reqs = Vec::new();
        if let Some(labels) = sel.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in labels {
                reqs.push(LabelReq::Eq(k.clone(), v.as_str()?.to_string()));
            }
        }
        for e in sel
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = e.get("key").and_then(Value::as_str)?.to_string();
            let values = e
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()?;
            reqs.push(match e.get("operator").and_then(Value::as_str)? {
                "In" => LabelReq::In(key, values),
                "NotIn" => LabelReq::NotIn(key, values),
                "Exists" => LabelReq::Exists(key),
                "DoesNotExist" => LabelReq::NotExists(key),
                _ => return None,
            });
        }
        Some(Self(reqs))
    }

    /// Whether an object's labels satisfy the selector.
    pub fn matches(&self, obj: &Value) -> bool {
        let empty = serde_json::Map::new();
        let labels = crate::machinery::meta::field(obj, "labels").and_then(Value::as_object);
        self.matches_labels(labels.unwrap_or(&empty))
    }

    /// Whether a label map satisfies the selector.
    pub fn matches_labels(&self, labels: &serde_json::Map<String, Value>) -> bool {
        let get = |k: &str| labels.get(k).and_then(Value::as_str);
        self.0.iter().all(|r| match r {
            LabelReq::Eq(k, v) => get(k) == Some(v.as_str()),
            LabelReq::NotEq(k, v) => get(k) != Some(v.as_str()),
            LabelReq::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            LabelReq::Exists(k) => get(k).is_some(),
            LabelReq::NotExists(k) => get(k).is_none(),
            LabelReq::Gt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x > *n),
            LabelReq::Lt(k, n) => get(k)
                .and_then(|x| x.parse::<i64>().ok())
                .is_some_and(|x| x < *n),
        })
    }
}

/// The canonical form (`k=v`, `k!=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`, joined by
/// commas), which parses back to the same selector.
impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match r {
                LabelReq::Eq(k, v) => write!(f, "{k}={v}")?,
                LabelReq::NotEq(k, v) => write!(f, "{k}!={v}")?,
                LabelReq::In(k, vs) => write!(f, "{k} in ({})", vs.join(","))?,
                LabelReq::NotIn(k, vs) => write!(f, "{k} notin ({})", vs.join(","))?,
                LabelReq::Exists(k) => write!(f, "{k}")?,
                LabelReq::NotExists(k) => write!(f, "!{k}")?,
                LabelReq::Gt(k, n) => write!(f, "{k}>{n}")?,
                LabelReq::Lt(k, n) => write!(f, "{k}<{n}")?,
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldReq {
    field: String,
    value: String,
    negate: bool,
}

/// A parsed `fieldSelector` (`f=v`, `f==v`, `f!=v`, comma = AND).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<FieldReq>);

/// Extra selectable fields of a few built-in types, beyond `metadata.name`/`metadata.namespace`.
fn extra_fields(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        ("", "pods") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "status.phase",
            "status.podIP",
        ],
        // Both event APIs select on the stored (core/v1) form, under core/v1 names.
        ("" | "events.k8s.io", "events") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        ("", "secrets") => &["type"],
        ("", "namespaces") => &["status.phase"],
        _ => &[],
    }
}

/// The kinds whose field labels upstream converts with a function of their own, which words
/// an unknown label its own way.
fn has_own_field_labels(group: &str, plural: &str) -> bool {
    matches!(
        (group, plural),
        (
            "",
            "pods"
                | "nodes"
                | "replicationcontrollers"
                | "events"
                | "namespaces"
                | "secrets"
                | "services"
        ) | ("events.k8s.io", "events")
            | ("certificates.k8s.io", "certificatesigningrequests")
    )
}

impl FieldSelector {
    /// Parses a field selector and checks every field is selectable for the resource.
    pub fn parse(s: &str, group: &str, plural: &str) -> ApiResult<Self> {
        let mut reqs = Vec::new();
        if s.trim().is_empty() {
            return Ok(Self(reqs));
        }
        for part in s.split(',') {
            let (field, value, negate) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(ApiError::bad_request(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            let field = field.trim();
            let known = field == "metadata.name"
                || field == "metadata.namespace"
                || extra_fields(group, plural).contains(&field);
            if !known && has_own_field_labels(group, plural) {
                return Err(ApiError::bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            if !known {
                return Err(ApiError::bad_request(format!(
                    "\"{field}\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
                )));
            }
            reqs.push(FieldReq {
                field: field.to_string(),
                value: value.trim().to_string(),
                negate,
            });
        }
        Ok(Self(reqs))
    }

    /// True when no requirement is present.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether the object satisfies the selector.
    pub fn matches(&self, obj: &Value) -> bool {
        self.0.iter().all(|r| {
            let actual = match r.field.as_str() {
                "metadata.name" => meta::name(obj).to_string(),
                "metadata.namespace" => meta::namespace(obj).to_string(),
                // An event's source: `source.component`, else its reporting controller.
                "source" => obj
                    .pointer("/source/component")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .or_else(|| obj.get("reportingComponent").and_then(Value::as_str))
                    .unwrap_or("")
                    .to_string(),
                other => {
                    let ptr = format!("/{}", other.replace('.', "/"));
                    match obj.pointer(&ptr) {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Null) | None => String::new(),
                        Some(v) => v.to_string(),
                    }
                }
            };
            (actual == r.value) != r.negate
        })
    }
}

/// The canonical form (`f==v`, `f!=v`, joined by commas), which parses back to the same
/// selector (`==`, not `=`, so that a value starting with `=` survives).
impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if r.negate { "!=" } else { "==" };
            write!(f, "{}{op}{}", r.field, r.value)?;
        }
        Ok(())
    }
}

/// Label and field selector together.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selectors {
    /// The label selector.
    pub labels: LabelSelector,
    /// The field selector.
    pub fields: FieldSelector,
}

impl Selectors {
    /// Whether both selectors match.
    pub fn matches(&self, obj: &Value) -> bool {
        (self.labels.is_empty() || self.labels.matches(obj))
            && (self.fields.is_empty() || self.fields.matches(obj))
    }

    /// True when neither selector has requirements.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

/// `metav1.LabelSelector` semantics on a label map: `matchLabels` and `matchExpressions`
/// (`In`, `NotIn`, `Exists`, `DoesNotExist`) all hold. An empty selector matches everything;
/// a malformed one (an unknown operator, a value that is not a string) matches nothing.
pub fn selector_matches(selector: &Value, labels: &Map<String, Value>) -> bool {
    LabelSelector::from_object(selector).is_some_and(|s| s.matches_labels(labels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn label_selector_forms() {
        let o = obj(json!({"app": "web", "tier": "fe"}));
        for (sel, want) in [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app in (web, db)", true),
            ("app notin (web)", false),
            ("app", true),
            ("!app", false),
            ("missing!=x", true),
            ("missing notin (x)", true),
            ("app=web,tier=be", false),
            ("app in (db),tier", false),
        ] {
            assert_eq!(
                LabelSelector::parse(sel).map(|s| s.matches(&o)),
                Ok(want),
                "{sel}"
            );
        }
        assert!(LabelSelector::parse("a in b").is_err());
        assert!(LabelSelector::parse("a=b,").is_err());
        assert!(LabelSelector::parse("=x").is_err());
    }

    #[test]
    fn field_selector_forms() {
        let o = obj(json!({}));
        let p = |s| FieldSelector::parse(s, "", "configmaps");
        assert_eq!(p("metadata.name=a").map(|s| s.matches(&o)), Ok(true));
        assert_eq!(p("metadata.name!=a").map(|s| s.matches(&o)), Ok(false));
        assert_eq!(
            p("metadata.namespace==ns,metadata.name=a").map(|s| s.matches(&o)),
            Ok(true)
        );
        assert_eq!(p("spec.foo=1").map(|_| ()).map_err(|e| e.code), Err(400));
        assert!(p("garbage").is_err());
    }

    #[test]
    fn canonical_forms_parse_back() {
        for sel in ["a=b,!c,d in (x, y),e notin (),f!=g,h", ""] {
            let parsed = LabelSelector::parse(sel).unwrap();
            assert_eq!(LabelSelector::parse(&parsed.to_string()), Ok(parsed));
        }
        let p = |s: &str| FieldSelector::parse(s, "", "secrets");
        for sel in ["metadata.name= =x", "type!=a=b,metadata.namespace==ns"] {
            let parsed = p(sel).unwrap();
            assert_eq!(p(&parsed.to_string()), Ok(parsed));
        }
    }

    #[test]
    fn label_selector_objects_match_like_their_query_form() {
        let sel = json!({"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["fe", "be"]},
                                 {"key": "canary", "operator": "DoesNotExist"}]});
        let parsed = LabelSelector::from_object(&sel).expect("well formed");
        assert_eq!(parsed.to_string(), "app=web,tier in (fe,be),!canary");
        let labelled = |l: Value| json!({"metadata": {"labels": l}});
        assert!(parsed.matches(&labelled(json!({"app": "web", "tier": "fe"}))));
        assert!(!parsed.matches(&labelled(
            json!({"app": "web", "tier": "fe", "canary": "1"})
        )));
        assert!(!parsed.matches(&labelled(json!({"app": "web"}))));
        let bad = json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
        assert_eq!(LabelSelector::from_object(&bad), None);
    }
}
