//! `Table` responses for custom resources: `Name` plus the served version's
//! `additionalPrinterColumns` (type, format, priority, description), cells converted to the
//! column type and null where the JSONPath selects nothing, a default `Age` date column
//! when none are declared, and the CRD validation of printer columns (apiextensions-apiserver
//! `registry/customresource/tableconvertor` and `apis/apiextensions/validation`).

use crate::common;
use crate::tables::{TABLE_ACCEPT, cells, columns, is_fresh_age, priorities, table};

use apiserver_sim::ApiServer;
use serde_json::{Value, json};

fn widget_crd(columns: Value) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": columns,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    })
}

/// Columns with every type, a priority-1 column, a filter path, a date and a missing path.
pub fn printer_columns() -> Value {
    json!([
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status",
         "description": "Whether the widget is ready"},
        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio", "format": "double"},
        {"name": "Paused", "type": "boolean", "jsonPath": ".spec.paused"},
        {"name": "Size", "type": "string", "jsonPath": ".spec.size", "priority": 1},
        {"name": "Built", "type": "date", "jsonPath": ".status.builtAt"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    ])
}

/// Installs the widget CRD with these columns and waits until it is served.
pub async fn install(server: &ApiServer, columns: Value) {
    server.create_json(widget_crd(columns)).expect("crd");
    server.settle().await;
}

fn three_hours_ago() -> String {
    let t = jiff::Timestamp::now() - jiff::SignedDuration::from_secs(3 * 3600 + 20);
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The widget `w` with spec and status as given.
pub fn widget(name: &str, spec: Value, status: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": "default"}, "spec": spec, "status": status})
}

/// tableconvertor.go: header `Name` then each column as declared (description defaulted
/// to the JSONPath), cells typed (`integer` truncates, `number`, `boolean`, `date` as an
/// age, `string` prints any value), null when nothing is selected.
#[tokio::test]
async fn custom_resource_printer_columns() {
    let server = common::server().await;
    install(&server, printer_columns()).await;
    let info = server
        .create_json(widget(
            "full",
            json!({"replicas": 3.9, "ratio": 2, "paused": true, "size": {"cpu": 2}}),
            json!({}),
        ))
        .expect("widget");
    // Status is a subresource: write it with a PUT of /status.
    let mut with_status = info.clone();
    with_status["status"] = json!({"builtAt": three_hours_ago(),
        "conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]});
    let r = common::raw(
        &server,
        "PUT",
        "/apis/example.com/v1/namespaces/default/widgets/full/status",
        &[("Content-Type", "application/json")],
        with_status.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    server
        .create_json(widget(
            "bare",
            json!({"ratio": 0.25, "paused": "no"}),
            json!({}),
        ))
        .expect("widget");

    let t = table(&server, "/apis/example.com/v1/namespaces/default/widgets").await;
    assert_eq!(
        columns(&t),
        [
            "Name", "Replicas", "Ready", "Ratio", "Paused", "Size", "Built", "Age"
        ]
    );
    assert_eq!(priorities(&t), [0, 0, 0, 0, 0, 1, 0, 0]);
    let defs = &t["columnDefinitions"];
    assert_eq!(
        (defs[0]["format"].as_str(), defs[1]["type"].as_str()),
        (Some("name"), Some("integer"))
    );
    assert_eq!(defs[2]["description"], "Whether the widget is ready");
    assert_eq!(
        defs[1]["description"],
        "Custom resource definition column (in JSONPath format): .spec.replicas"
    );
    assert_eq!(
        (defs[3]["format"].as_str(), defs[6]["type"].as_str()),
        (Some("double"), Some("date"))
    );
    let c = cells(&t, "full");
    assert_eq!(
        &c[..7],
        &[
            json!("full"),
            json!(3),
            json!("True"),
            json!(2),
            json!(true),
            json!("{\"cpu\":2}"),
            json!("3h")
        ]
    );
    assert!(is_fresh_age(&c[7]), "{c:?}");
    let c = cells(&t, "bare");
    assert_eq!(
        &c[..7],
        &[
            json!("bare"),
            Value::Null,
            Value::Null,
            json!(0.25),
            Value::Null,
            Value::Null,
            Value::Null
        ]
    );
}

/// customresource_handler.go `serveDefaultColumnsIfEmpty`: without printer columns a
/// custom resource's table is `Name` and an `Age` date column.
#[tokio::test]
async fn custom_resource_default_columns() {
    let server = common::server().await;
    install(&server, json!([])).await;
    server
        .create_json(widget("w", json!({}), json!({})))
        .expect("widget");
    let t = table(&server, "/apis/example.com/v1/namespaces/default/widgets/w").await;
    assert_eq!(columns(&t), ["Name", "Age"]);
    assert_eq!(t["columnDefinitions"][1]["type"], "date");
    let c = cells(&t, "w");
    assert_eq!(c[0], "w");
    assert!(is_fresh_age(&c[1]), "{c:?}");
}

/// apiextensions validation `ValidateCustomResourceColumnDefinition`: a column needs a name,
/// a known type and format and a JSONPath starting with `.`; otherwise 422 and nothing is
/// stored.
#[tokio::test]
async fn invalid_printer_columns_are_refused() {
    let server = common::server().await;
    let body = widget_crd(json!([
        {"name": "Bad", "type": "string", "jsonPath": "spec.replicas"},
        {"name": "", "type": "text", "format": "percent", "jsonPath": ".spec.x"}
    ]));
    let r = common::raw(
        &server,
        "POST",
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &[("Content-Type", "application/json")],
        body.to_string().as_bytes(),
    )
    .await;
    assert_eq!(r.status, 422, "{}", r.body);
    let msg = r.json()["message"].as_str().unwrap_or("").to_string();
    for part in [
        "spec.versions[0].additionalPrinterColumns[0].JSONPath: Invalid value: \"spec.replicas\": must be a simple json path starting with .",
        "spec.versions[0].additionalPrinterColumns[1].name: Required value",
        "spec.versions[0].additionalPrinterColumns[1].type: Invalid value: \"text\": must be one of boolean,date,integer,number,string",
        "spec.versions[0].additionalPrinterColumns[1].format: Invalid value: \"percent\": must be one of byte,date,date-time,double,float,int32,int64,password",
    ] {
        assert!(msg.contains(part), "missing {part:?} in {msg}");
    }
    assert!(
        server
            .objects("apiextensions.k8s.io", "customresourcedefinitions")
            .is_empty()
    );
}

/// tableconvertor.go `New`: a path that passes validation but does not parse is accepted;
/// upstream serves the columns before it and logs the error.
#[tokio::test]
async fn unparsable_column_path_truncates_the_columns() {
    let server = common::server().await;
    install(
        &server,
        json!([
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
            {"name": "Broken", "type": "string", "jsonPath": ".spec.items[0"},
            {"name": "Later", "type": "string", "jsonPath": ".spec.later"}
        ]),
    )
    .await;
    server
        .create_json(widget("w", json!({"replicas": 2}), json!({})))
        .expect("widget");
    let t = table(&server, "/apis/example.com/v1/namespaces/default/widgets").await;
    assert_eq!(columns(&t), ["Name", "Replicas"]);
    assert_eq!(cells(&t, "w"), [json!("w"), json!(2)]);
    let r = common::raw(
        &server,
        "GET",
        "/apis/example.com/v1/namespaces/default/widgets",
        &[("Accept", TABLE_ACCEPT)],
        b"",
    )
    .await;
    assert_eq!(r.header("Content-Type"), Some("application/json"));
}
