//! The error of the RBAC rules.

/// What declaring rules or writing roles can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A rule grants nothing (it has no verbs).
    #[error("invalid RBAC rule: {0}")]
    InvalidRule(String),

    /// The roles could not be written as YAML.
    #[error("cannot write the RBAC roles as YAML: {0}")]
    Yaml(#[source] serde_yaml::Error),
}
