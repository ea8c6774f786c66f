//! SelfSubjectRulesReview (`POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews`,
//! what `kubectl auth can-i --list` sends): every rule the requesting user's roles grant in
//! the review's namespace, cluster-wide bindings included; resource and non-resource rules
//! apart, as the RBAC authorizer reads them.

use k8s_openapi::api::rbac::v1::PolicyRule;
use parking_lot::Mutex;
use serde_json::{Value, json};

use super::identity::Identity;
use super::rbac::rules_for;
use super::state::Auth;
use crate::machinery::pointer::text;
use crate::machinery::status::{ApiError, ApiResult};
use crate::store::State;

/// Whether a resource request is a SelfSubjectRulesReview create.
pub(crate) fn is_rules_review(group: &str, plural: &str, name: Option<&str>) -> bool {
    group == "authorization.k8s.io" && plural == "selfsubjectrulesreviews" && name.is_none()
}

/// Everything, for a server that authorizes every request (RBAC off).
fn allow_all() -> Vec<PolicyRule> {
    let all = || Some(vec!["*".to_owned()]);
    vec![
        PolicyRule {
            verbs: vec!["*".to_owned()],
            api_groups: all(),
            resources: all(),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: vec!["*".to_owned()],
            non_resource_urls: all(),
            ..PolicyRule::default()
        },
    ]
}

/// The review's `status`: `rules` split into resource and non-resource rules; incomplete,
/// with the reasons, when some binding could not be resolved.
fn status(rules: &[PolicyRule], errors: &[String]) -> Value {
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in rules {
        if let Some(urls) = rule.non_resource_urls.as_ref().filter(|u| !u.is_empty()) {
            non_resource_rules.push(json!({"verbs": rule.verbs, "nonResourceURLs": urls}));
            continue;
        }
        let mut resource = json!({
            "verbs": rule.verbs,
            "apiGroups": rule.api_groups.clone().unwrap_or_default(),
            "resources": rule.resources.clone().unwrap_or_default(),
        });
        if let Some(names) = rule.resource_names.as_ref().filter(|n| !n.is_empty()) {
            resource["resourceNames"] = json!(names);
        }
        resource_rules.push(resource);
    }
    let mut status = json!({
        "resourceRules": resource_rules,
        "nonResourceRules": non_resource_rules,
        "incomplete": !errors.is_empty(),
    });
    if !errors.is_empty() {
        status["evaluationError"] = json!(errors.join(", "));
    }
    status
}

/// Answers a rules review `body` for `who`: the review with its `status`, to send with 201.
pub(crate) fn serve(
    auth: &Auth,
    state: &Mutex<State>,
    who: &Identity,
    body: &[u8],
) -> ApiResult<Value> {
    let mut review: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("decoding SelfSubjectRulesReview: {e}")))?;
    let namespace = text(&review, "/spec/namespace").to_owned();
    let (rules, errors) = if auth.enabled {
        rules_for(&state.lock(), who, &namespace)
    } else {
        (allow_all(), Vec::new())
    };
    if let Some(obj) = review.as_object_mut() {
        obj.insert("status".into(), status(&rules, &errors));
        obj.insert("apiVersion".into(), json!("authorization.k8s.io/v1"));
        obj.insert("kind".into(), json!("SelfSubjectRulesReview"));
        obj.entry("metadata").or_insert_with(|| json!({}));
    }
    Ok(review)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_split_into_resource_and_non_resource_rules() {
        let rules = vec![
            PolicyRule {
                verbs: vec!["get".into()],
                api_groups: Some(vec!["".into()]),
                resources: Some(vec!["configmaps".into()]),
                resource_names: Some(vec!["settings".into()]),
                ..PolicyRule::default()
            },
            PolicyRule {
                verbs: vec!["get".into()],
                non_resource_urls: Some(vec!["/healthz".into()]),
                ..PolicyRule::default()
            },
        ];
        assert_eq!(
            status(&rules, &[]),
            json!({
                "resourceRules": [{"verbs": ["get"], "apiGroups": [""],
                    "resources": ["configmaps"], "resourceNames": ["settings"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                "incomplete": false,
            })
        );
        let partial = status(
            &[],
            &["clusterrole.rbac.authorization.k8s.io \"x\" not found".into()],
        );
        assert_eq!(partial["incomplete"], json!(true));
        assert!(
            partial["evaluationError"]
                .as_str()
                .unwrap()
                .contains("not found")
        );
    }
}
