//! Lists: pagination (`limit`, `continue`, `remainingItemCount`), resourceVersion semantics
//! (`0`, `NotOlderThan`, `Exact`, too old), label and field selectors and their errors — of
//! Secrets, which nothing but the scenario puts in its namespace (a cluster's controllers
//! publish ConfigMaps in every namespace).

use serde_json::{Value, json};

use crate::ctx::Ctx;

/// The names and the list metadata of a list answer.
fn summary(v: &Value) -> Value {
    let names: Vec<Value> = v["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["metadata"]["name"].clone())
                .collect()
        })
        .unwrap_or_default();
    json!({"kind": v["kind"], "names": names, "metadata": v["metadata"],
           "status": v["status"], "message": v["message"], "reason": v["reason"], "code": v["code"]})
}

pub async fn run(ctx: &mut Ctx<'_>) {
    ctx.namespace().await;
    let ns = ctx.ns();
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    // "0" to "6" in base64.
    const DATA: [&str; 7] = ["MA==", "MQ==", "Mg==", "Mw==", "NA==", "NQ==", "Ng=="];
    let mut first_rv = String::new();
    for (i, (tier, env)) in [
        ("web", "prod"),
        ("web", "dev"),
        ("db", "prod"),
        ("db", "dev"),
        ("cache", "prod"),
        ("web", "test"),
        ("db", "test"),
    ]
    .iter()
    .enumerate()
    {
        let r = ctx
            .setup(
                "POST",
                &secrets,
                json!({"metadata": {"name": format!("cm{i}"),
            "labels": {"tier": tier, "env": env}}, "data": {"i": DATA[i]}}),
            )
            .await;
        if i == 0 {
            first_rv = r.json()["metadata"]["resourceVersion"]
                .as_str()
                .unwrap_or_default()
                .to_string();
        }
    }
    ctx.setup("POST", &secrets, json!({"metadata": {"name": "plain"}}))
        .await;
    let queries = [
        ("all", String::new()),
        ("limit-3", "limit=3".to_string()),
        ("label-eq", "labelSelector=tier%3Dweb".into()),
        ("label-neq", "labelSelector=tier!%3Dweb".into()),
        ("label-in", "labelSelector=env+in+(prod,test)".into()),
        ("label-notin", "labelSelector=env+notin+(prod)".into()),
        ("label-exists", "labelSelector=tier".into()),
        ("label-not-exists", "labelSelector=!tier".into()),
        ("label-and", "labelSelector=tier%3Ddb,env%3Dprod".into()),
        ("label-invalid", "labelSelector=tier%3D%3D%3Dx".into()),
        ("label-invalid-value", "labelSelector=tier%3Da%20b".into()),
        ("field-name", "fieldSelector=metadata.name%3Dcm2".into()),
        (
            "field-name-neq",
            "fieldSelector=metadata.name!%3Dcm2".into(),
        ),
        (
            "field-namespace",
            format!("fieldSelector=metadata.namespace%3D{ns}"),
        ),
        ("field-unsupported", "fieldSelector=data.i%3D1".into()),
        ("field-invalid", "fieldSelector=metadata.name".into()),
        ("rv-0", "resourceVersion=0".into()),
        (
            "rv-not-older",
            format!("resourceVersion={first_rv}&resourceVersionMatch=NotOlderThan"),
        ),
        (
            "rv-match-without-rv",
            "resourceVersionMatch=NotOlderThan".into(),
        ),
        (
            "rv-exact-too-old",
            "resourceVersion=1&resourceVersionMatch=Exact".into(),
        ),
        (
            "rv-bad-match",
            "resourceVersion=1&resourceVersionMatch=Sometimes".into(),
        ),
        ("rv-invalid", "resourceVersion=abc".into()),
        ("continue-invalid", "limit=2&continue=not-a-token".into()),
        ("limit-with-rv-0", "limit=2&resourceVersion=0".into()),
    ];
    for (id, query) in queries {
        let path = format!("{secrets}?{query}");
        let r = ctx.send("GET", &path, &[], Vec::new()).await;
        ctx.note(id, json!({"status": r.status, "list": summary(&r.json())}));
    }
    // Pages follow their continue token to the end.
    let mut path = format!("{secrets}?limit=3");
    for page in 1..=3 {
        let r = ctx.send("GET", &path, &[], Vec::new()).await;
        let v = r.json();
        ctx.note(
            &format!("page-{page}"),
            json!({"status": r.status, "list": summary(&v)}),
        );
        let Some(token) = v["metadata"]["continue"].as_str().filter(|t| !t.is_empty()) else {
            break;
        };
        path = format!("{secrets}?limit=3&continue={token}");
    }
    // Across namespaces, filtered to this scenario's namespace by field selector.
    let r = ctx
        .send(
            "GET",
            &format!(
                "/api/v1/secrets?fieldSelector=metadata.namespace%3D{ns}&labelSelector=tier%3Dcache"
            ),
            &[],
            Vec::new(),
        )
        .await;
    ctx.note(
        "all-namespaces-filtered",
        json!({"status": r.status, "list": summary(&r.json())}),
    );
}
