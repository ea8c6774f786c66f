//! The options of a write (POST, PUT, PATCH, DELETE) as the operations take them: the
//! request's `dryRun`, `fieldValidation`, `fieldManager` and `force`, and what the HTTP layer
//! adds (field ownership, the subresource, the owner-reference admission of the writer).

use super::owner_refs::OwnerRefsAdmission;
use crate::machinery::query::Query;
use crate::machinery::status::{ApiError, ApiResult};

/// `fieldValidation`: what to do with fields a custom resource's schema does not know.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them (upstream also adds a `Warning` header; the simulator does not).
    #[default]
    Warn,
    /// Reject the request with 400.
    Strict,
}

/// How a write treats field ownership (`metadata.managedFields`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Ownership {
    /// Untracked (seeds, the simulator's controllers): the `managedFields` the write brings,
    /// or else the live object's, are kept.
    #[default]
    Keep,
    /// Recorded for the field manager (API requests).
    Record,
    /// Already settled (server-side apply): the `managedFields` the write brings are stored.
    Settled,
}

/// Options of a write (POST/PUT/PATCH/DELETE).
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldValidation` (default Warn).
    pub field_validation: FieldValidation,
    /// Seed writes only (never set from a request): an update without
    /// `metadata.resourceVersion` is unconditional for every type, custom resources included.
    pub unconditional: bool,
    /// `fieldManager`, or the default taken from the `User-Agent` (set by the HTTP layer).
    pub field_manager: String,
    /// `force` (apply only): take fields other managers own instead of conflicting.
    pub force: bool,
    /// How the write treats `managedFields`.
    pub ownership: Ownership,
    /// The subresource written through (`status`, `scale`), empty for the object itself.
    pub subresource: &'static str,
    /// Who writes, when `OwnerReferencesPermissionEnforcement` is on: changes to owner
    /// references are checked against this user's permissions.
    pub owner_refs: Option<OwnerRefsAdmission>,
    /// Fields mutating admission webhooks added to the request, which the writer does not
    /// own (`Record` only).
    pub added_by_admission: Option<std::sync::Arc<crate::api::apply::FieldSet>>,
}

impl WriteOptions {
    /// Who the write records as the owner of the fields it sets.
    pub(crate) fn writer(&self) -> crate::api::apply::Writer<'_> {
        crate::api::apply::Writer {
            manager: &self.field_manager,
            subresource: self.subresource,
            added_by_admission: self.added_by_admission.as_deref(),
        }
    }

    /// Parses and validates write options.
    pub fn parse(q: &Query) -> ApiResult<Self> {
        let dry_run = match q.get("dryRun") {
            None | Some("") => false,
            Some("All") => true,
            Some(other) => {
                return Err(ApiError::invalid_options(
                    "CreateOptions",
                    "dryRun",
                    // Upstream validates `dryRun` as a list and prints it so.
                    &format!("Unsupported value: [{other:?}]: supported values: \"All\""),
                ));
            }
        };
        if let Some(fm) = q.get("fieldManager")
            && (fm.len() > 128 || fm.chars().any(|c| c.is_control()))
        {
            return Err(ApiError::invalid_options(
                "CreateOptions",
                "fieldManager",
                "Invalid value: must be at most 128 printable characters",
            ));
        }
        let field_validation = match q.get("fieldValidation") {
            None | Some("") | Some("Warn") => FieldValidation::Warn,
            Some("Ignore") => FieldValidation::Ignore,
            Some("Strict") => FieldValidation::Strict,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "fieldValidation must be one of \"Ignore\", \"Warn\" or \"Strict\", got {other:?}"
                )));
            }
        };
        Ok(Self {
            dry_run,
            field_validation,
            force: q.flag("force"),
            field_manager: q.get("fieldManager").unwrap_or("").to_string(),
            ..Self::default()
        })
    }
}
