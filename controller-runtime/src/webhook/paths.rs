//! The paths webhooks are served on, derived from group, version and kind exactly as
//! controller-runtime's builder derives them, and the check a custom path must pass.

use crate::webhook::error::Error;

/// The path of every conversion webhook (one for all kinds, as in controller-runtime).
pub const CONVERT_PATH: &str = "/convert";

/// The path of a defaulter: `/mutate-<group with dots as dashes>-<version>-<lowercase kind>`,
/// e.g. `/mutate-batch-tutorial-kubebuilder-io-v1-cronjob`, or `/mutate--v1-pod` for the core
/// group (controller-runtime's `generateMutatePath`).
pub fn mutate_path(group: &str, version: &str, kind: &str) -> String {
    format!("/mutate-{}", path_suffix(group, version, kind))
}

/// The path of a validator: `/validate-<group with dots as dashes>-<version>-<lowercase kind>`
/// (controller-runtime's `generateValidatePath`).
pub fn validate_path(group: &str, version: &str, kind: &str) -> String {
    format!("/validate-{}", path_suffix(group, version, kind))
}

fn path_suffix(group: &str, version: &str, kind: &str) -> String {
    format!(
        "{}-{version}-{}",
        group.replace('.', "-"),
        kind.to_lowercase()
    )
}

/// Checks a custom path against controller-runtime's rule `^((/[a-zA-Z0-9-_]+)+|/)$`.
pub(crate) fn check_path(path: &str) -> Result<(), Error> {
    let invalid = |reason: &str| {
        Err(Error::InvalidPath {
            path: path.to_owned(),
            reason: reason.to_owned(),
        })
    };
    if path == "/" {
        return Ok(());
    }
    let Some(rest) = path.strip_prefix('/') else {
        return invalid("it must start with `/`");
    };
    for segment in rest.split('/') {
        if segment.is_empty() {
            return invalid("it has an empty segment (`//` or a trailing `/`)");
        }
        if !segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return invalid("segments may hold only ASCII letters, digits, `-` and `_`");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_controller_runtime() {
        assert_eq!(
            mutate_path("batch.tutorial.kubebuilder.io", "v1", "CronJob"),
            "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"
        );
        assert_eq!(
            validate_path("apps", "v1", "Deployment"),
            "/validate-apps-v1-deployment"
        );
        assert_eq!(mutate_path("", "v1", "Pod"), "/mutate--v1-pod");
    }

    #[test]
    fn custom_paths_are_checked() {
        for good in ["/", "/a", "/validate-x/v_1", "/A-b/c"] {
            assert!(check_path(good).is_ok(), "{good}");
        }
        for bad in ["", "a", "/a/", "//a", "/a b", "/a?b", "/é"] {
            assert!(check_path(bad).is_err(), "{bad}");
        }
    }
}
