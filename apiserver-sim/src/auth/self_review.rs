//! SelfSubjectReview (`POST /apis/authentication.k8s.io/v1/selfsubjectreviews`, what `kubectl
//! auth whoami` sends): the requesting user's name and groups, as the authenticator saw them.

use serde_json::{Value, json};

use super::identity::Identity;
use crate::machinery::status::{ApiError, ApiResult};

/// Whether a resource request is a SelfSubjectReview create.
pub(crate) fn is_self_review(group: &str, plural: &str, name: Option<&str>) -> bool {
    group == "authentication.k8s.io" && plural == "selfsubjectreviews" && name.is_none()
}

/// Answers a review `body` for `who`: the review with its `status`, to send with 201.
pub(crate) fn serve(who: &Identity, body: &[u8]) -> ApiResult<Value> {
    let mut review: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("decoding SelfSubjectReview: {e}")))?;
    let Some(obj) = review.as_object_mut() else {
        return Err(ApiError::bad_request(
            "the body of a SelfSubjectReview must be a JSON object",
        ));
    };
    obj.insert("apiVersion".into(), json!("authentication.k8s.io/v1"));
    obj.insert("kind".into(), json!("SelfSubjectReview"));
    obj.entry("metadata").or_insert_with(|| json!({}));
    obj.insert(
        "status".into(),
        json!({"userInfo": {"username": who.user, "groups": who.groups}}),
    );
    Ok(review)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_with_the_requesting_user() {
        let who = Identity::service_account("team", "robot");
        let review = serve(
            &who,
            br#"{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}"#,
        )
        .expect("served");
        assert_eq!(
            review["status"]["userInfo"]["username"],
            "system:serviceaccount:team:robot"
        );
        assert_eq!(
            review["status"]["userInfo"]["groups"],
            json!([
                "system:serviceaccounts",
                "system:serviceaccounts:team",
                "system:authenticated"
            ])
        );
        assert_eq!(serve(&who, b"[]").map_err(|e| e.code).err(), Some(400));
        assert!(is_self_review(
            "authentication.k8s.io",
            "selfsubjectreviews",
            None
        ));
        assert!(!is_self_review(
            "authorization.k8s.io",
            "selfsubjectreviews",
            None
        ));
    }
}
