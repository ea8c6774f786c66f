//! The 409 an apply gets when it would change fields other managers own: one
//! `FieldManagerConflict` cause per field, and the message kube-apiserver words
//! (`Apply failed with 1 conflict: conflict with "mgr": .spec.replicas`).

use super::fieldpath::path_string;
use super::updater::Conflicts;
use crate::machinery::status::{ApiError, Cause};

/// The `Status` of a refused apply.
pub(crate) fn conflict_error(conflicts: &Conflicts) -> ApiError {
    let mut sorted: Vec<_> = conflicts.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut causes = Vec::new();
    let mut lines = Vec::new();
    let mut total = 0;
    for (id, set) in &sorted {
        let who = id.describe();
        let paths: Vec<String> = set.paths().iter().map(|p| path_string(p)).collect();
        total += paths.len();
        lines.push(format!("conflicts with {who}:"));
        for p in &paths {
            lines.push(format!("- {p}"));
            causes.push(Cause {
                reason: "FieldManagerConflict".into(),
                message: format!("conflict with {who}"),
                field: p.clone(),
            });
        }
    }
    let message = match causes.as_slice() {
        [one] => format!(
            "Apply failed with 1 conflict: {}: {}",
            one.message, one.field
        ),
        _ => format!("Apply failed with {total} conflicts: {}", lines.join("\n")),
    };
    let mut e = ApiError::new(409, "Conflict", message);
    e.details.causes = causes;
    e
}
