//! Unit tests of the JSONPath dialect: fields, indices, slices, filters, parse errors.

use super::*;
use serde_json::json;

fn find(path: &str, v: &Value) -> Vec<Value> {
    JsonPath::parse(path)
        .expect("parses")
        .find(v)
        .into_iter()
        .map(Cow::into_owned)
        .collect()
}

#[test]
fn fields_indices_filters() {
    let o = json!({"spec": {"replicas": 3, "items": [{"n": "a"}, {"n": "b"}, {"n": "c"}],
        "labels": {"app.kubernetes.io/name": "x"}},
        "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}});
    assert_eq!(find(".spec.replicas", &o), vec![json!(3)]);
    assert_eq!(find(".spec.missing", &o), Vec::<Value>::new());
    assert_eq!(find(".spec.items[1].n", &o), vec![json!("b")]);
    assert_eq!(find(".spec.items[-1].n", &o), vec![json!("c")]);
    assert_eq!(find(".spec.items[9].n", &o), Vec::<Value>::new());
    assert_eq!(find(".spec.items[0:2].n", &o), vec![json!("a"), json!("b")]);
    assert_eq!(find(".spec.items[*].n", &o).len(), 3);
    assert_eq!(
        find(".spec.labels.app\\.kubernetes\\.io/name", &o),
        vec![json!("x")]
    );
    assert_eq!(
        find(".spec.labels['app.kubernetes.io/name']", &o),
        vec![json!("x")]
    );
    assert_eq!(
        find(".status.conditions[?(@.type==\"Ready\")].status", &o),
        vec![json!("True")]
    );
    assert_eq!(
        find(".status.conditions[?(@.type=='Nope')].status", &o),
        Vec::<Value>::new()
    );
    assert_eq!(find("..n", &o).len(), 3);
    assert_eq!(find(".", &o), vec![o.clone()]);
    assert_eq!(
        find(".spec.items[?(@.n != \"a\")].n", &o),
        vec![json!("b"), json!("c")]
    );
}

#[test]
fn parse_errors() {
    for bad in [
        ".spec[",
        ".spec.x)",
        ".spec[a]",
        ".spec[?(@.x==1)",
        ".spec.x y",
    ] {
        assert!(JsonPath::parse(bad).is_err(), "{bad} should not parse");
    }
}
