//! `admissionregistration.k8s.io/v1` `ValidatingWebhookConfiguration` and
//! `MutatingWebhookConfiguration`: the defaults the API server fills in and the validation it
//! applies on create and update (Kubernetes API reference, admissionregistration/v1).

use serde_json::{Value, json};

use crate::machinery::meta;
use crate::machinery::pointer::strings;
use crate::machinery::resource_info::ResourceInfo;
use crate::machinery::status::{Cause, invalid_value, required};

/// The API group of webhook configurations.
pub const GROUP: &str = "admissionregistration.k8s.io";

/// Whether `info` is one of the two webhook configuration resources (the group also
/// serves admission policies and their bindings, which these rules do not cover).
pub fn is_webhook_configuration(info: &ResourceInfo) -> bool {
    info.group == GROUP
        && matches!(
            info.plural.as_str(),
            "validatingwebhookconfigurations" | "mutatingwebhookconfigurations"
        )
}

/// Whether a resource of [`GROUP`] is a mutating webhook configuration.
fn is_mutating(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("MutatingWebhookConfiguration")
}

/// Fills the v1 defaults of every webhook: `failurePolicy: Fail`, `matchPolicy: Equivalent`,
/// empty selectors, `timeoutSeconds: 10`, rule `scope: "*"`, service `port: 443` and, on
/// mutating webhooks, `reinvocationPolicy: Never`.
pub fn default(obj: &mut Value) {
    let mutating = is_mutating(obj);
    let Some(hooks) = obj.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for hook in hooks.iter_mut().filter_map(Value::as_object_mut) {
        hook.entry("failurePolicy").or_insert_with(|| json!("Fail"));
        hook.entry("matchPolicy")
            .or_insert_with(|| json!("Equivalent"));
        hook.entry("namespaceSelector").or_insert_with(|| json!({}));
        hook.entry("objectSelector").or_insert_with(|| json!({}));
        hook.entry("timeoutSeconds").or_insert_with(|| json!(10));
        if mutating {
            hook.entry("reinvocationPolicy")
                .or_insert_with(|| json!("Never"));
        }
        if let Some(rules) = hook.get_mut("rules").and_then(Value::as_array_mut) {
            for rule in rules.iter_mut().filter_map(Value::as_object_mut) {
                rule.entry("scope").or_insert_with(|| json!("*"));
            }
        }
        if let Some(svc) = hook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut)
        {
            svc.entry("port").or_insert_with(|| json!(443));
        }
    }
}

fn unsupported(field: &str, value: &str, supported: &[&str]) -> Cause {
    let list = supported
        .iter()
        .map(|s| format!("\"{s}\""))
        .collect::<Vec<_>>()
        .join(", ");
    Cause::typed(
        field,
        &format!("Unsupported value: {value:?}: supported values: {list}"),
    )
}

/// Checks an optional enum-valued string field.
fn one_of(hook: &Value, key: &str, path: &str, supported: &[&str], out: &mut Vec<Cause>) {
    if let Some(v) = hook.get(key)
        && !v.as_str().is_some_and(|s| supported.contains(&s))
    {
        out.push(unsupported(
            &format!("{path}.{key}"),
            v.as_str().unwrap_or(""),
            supported,
        ));
    }
}

fn validate_rules(hook: &Value, path: &str, out: &mut Vec<Cause>) {
    let Some(rules) = hook.get("rules").and_then(Value::as_array) else {
        return;
    };
    for (i, rule) in rules.iter().enumerate() {
        let p = format!("{path}.rules[{i}]");
        let ops = strings(rule, "/operations");
        if ops.is_empty() {
            out.push(required(&format!("{p}.operations"), ""));
        }
        for (j, op) in ops.iter().enumerate() {
            if !["*", "CREATE", "UPDATE", "DELETE", "CONNECT"].contains(op) {
                out.push(unsupported(
                    &format!("{p}.operations[{j}]"),
                    op,
                    &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
                ));
            }
        }
        if ops.len() > 1 && ops.contains(&"*") {
            out.push(invalid_value(
                &format!("{p}.operations"),
                "*",
                "if '*' is present, must not specify other operations",
            ));
        }
        for key in ["apiGroups", "apiVersions", "resources"] {
            if strings(rule, &format!("/{key}")).is_empty() {
                out.push(required(&format!("{p}.{key}"), ""));
            }
        }
        one_of(rule, "scope", &p, &["*", "Cluster", "Namespaced"], out);
    }
}

fn validate_client_config(hook: &Value, path: &str, out: &mut Vec<Cause>) {
    let p = format!("{path}.clientConfig");
    let cc = hook.get("clientConfig");
    let url = cc.and_then(|c| c.get("url")).and_then(Value::as_str);
    let svc = cc.and_then(|c| c.get("service")).filter(|s| s.is_object());
    match (url, svc) {
        (Some(_), Some(_)) | (None, None) => {
            out.push(required(&p, "exactly one of url or service is required"));
        }
        (Some(url), None) => {
            if !url.starts_with("https://") {
                out.push(invalid_value(
                    &format!("{p}.url"),
                    url,
                    "'https' is the only allowed URL scheme",
                ));
            }
        }
        (None, Some(svc)) => {
            for key in ["name", "namespace"] {
                if svc
                    .get(key)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    out.push(required(&format!("{p}.service.{key}"), ""));
                }
            }
            if let Some(port) = svc.get("port")
                && !port.as_i64().is_some_and(|n| (1..=65535).contains(&n))
            {
                out.push(invalid_value(
                    &format!("{p}.service.port"),
                    &port.to_string(),
                    "port is not valid: must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
}

/// Validation of a webhook configuration (the checks a real server makes that matter to
/// calling the webhooks: names, client config, rules, policies, versions, timeouts).
pub fn validate(obj: &Value) -> Vec<Cause> {
    let mutating = is_mutating(obj);
    let mut out = Vec::new();
    let hooks = match obj.get("webhooks") {
        None | Some(Value::Null) => return out,
        Some(Value::Array(a)) => a.as_slice(),
        Some(_) => {
            out.push(invalid_value("webhooks", "", "must be a list"));
            return out;
        }
    };
    let mut seen = Vec::new();
    for (i, hook) in hooks.iter().enumerate() {
        let path = format!("webhooks[{i}]");
        let name = hook.get("name").and_then(Value::as_str).unwrap_or("");
        if name.is_empty() {
            out.push(required(&format!("{path}.name"), ""));
        } else if !meta::is_dns_subdomain(name) || name.split('.').count() < 3 {
            out.push(invalid_value(
                &format!("{path}.name"),
                name,
                "should be a domain with at least three segments separated by dots",
            ));
        } else if seen.contains(&name) {
            let message = format!("Duplicate value: {name:?}");
            out.push(Cause::typed(&format!("{path}.name"), &message));
        }
        seen.push(name);
        match strings(hook, "/admissionReviewVersions") {
            v if v.iter().any(|v| *v == "v1" || *v == "v1beta1") => {}
            v if !v.is_empty() => out.push(invalid_value(
                &format!("{path}.admissionReviewVersions"),
                &v.join(","),
                "must include at least one of v1, v1beta1",
            )),
            _ => out.push(required(
                &format!("{path}.admissionReviewVersions"),
                "must specify one of v1, v1beta1",
            )),
        }
        match hook.get("sideEffects").and_then(Value::as_str) {
            None => out.push(required(
                &format!("{path}.sideEffects"),
                "must specify one of None, NoneOnDryRun",
            )),
            Some("None" | "NoneOnDryRun") => {}
            Some(other) => out.push(unsupported(
                &format!("{path}.sideEffects"),
                other,
                &["None", "NoneOnDryRun"],
            )),
        }
        one_of(hook, "failurePolicy", &path, &["Fail", "Ignore"], &mut out);
        one_of(
            hook,
            "matchPolicy",
            &path,
            &["Equivalent", "Exact"],
            &mut out,
        );
        if mutating {
            one_of(
                hook,
                "reinvocationPolicy",
                &path,
                &["IfNeeded", "Never"],
                &mut out,
            );
        }
        if let Some(t) = hook.get("timeoutSeconds")
            && !t.as_i64().is_some_and(|t| (1..=30).contains(&t))
        {
            out.push(invalid_value(
                &format!("{path}.timeoutSeconds"),
                &t.to_string(),
                "the timeout value must be between 1 and 30 seconds",
            ));
        }
        validate_client_config(hook, &path, &mut out);
        validate_rules(hook, &path, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_then_validates() {
        let mut cfg = json!({"kind": "MutatingWebhookConfiguration", "webhooks": [{
            "name": "a.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"namespace": "ns", "name": "svc"}},
            "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["configmaps"]}]}]});
        default(&mut cfg);
        assert_eq!(cfg["webhooks"][0]["failurePolicy"], "Fail");
        assert_eq!(cfg["webhooks"][0]["reinvocationPolicy"], "Never");
        assert_eq!(cfg["webhooks"][0]["rules"][0]["scope"], "*");
        assert_eq!(cfg["webhooks"][0]["clientConfig"]["service"]["port"], 443);
        assert!(validate(&cfg).is_empty(), "{:?}", validate(&cfg));
        cfg["webhooks"][0]["name"] = json!("short");
        cfg["webhooks"][0]["sideEffects"] = json!("Some");
        cfg["webhooks"][0]["timeoutSeconds"] = json!(31);
        cfg["webhooks"][0]["clientConfig"] = json!({"url": "http://x"});
        let fields: Vec<String> = validate(&cfg).into_iter().map(|c| c.field).collect();
        assert_eq!(
            fields,
            [
                "webhooks[0].name",
                "webhooks[0].sideEffects",
                "webhooks[0].timeoutSeconds",
                "webhooks[0].clientConfig.url"
            ]
        );
    }
}
