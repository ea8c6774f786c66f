//! What typed admission handlers answer: [`Warnings`] to allow (with or without warnings) or a
//! [`Denial`] with a message, an HTTP status code and a reason; and the review responses built
//! from them.

use std::error::Error as StdError;

use kube::core::admission::AdmissionResponse;
use kube::core::response::StatusSummary;

/// Warnings returned to the API client with an allowed (or denied) request (`kubectl` prints
/// them). Keep each under 120 characters.
pub type Warnings = Vec<String>;

/// A [`Validator`](crate::webhook::Validator)'s answer: `Ok(warnings)` allows the request (with
/// these warnings; an empty list for none), `Err(denial)` refuses it.
pub type Validation = Result<Warnings, Denial>;

/// A refused request: the message shown to the client, the HTTP status code (default 403
/// Forbidden, as controller-runtime's `Denied`), a machine-readable reason and warnings.
///
/// Built with [`Denial::new`], or converted from any `std::error::Error` with `?` (its message
/// becomes the denial's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denial {
    message: String,
    code: u16,
    reason: String,
    warnings: Warnings,
}

impl Denial {
    /// Refuses with `message`, code 403 and reason `Forbidden`.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            code: 403,
            reason: "Forbidden".to_owned(),
            warnings: Warnings::new(),
        }
    }

    /// The HTTP status code the API server answers the client with (default 403; the API
    /// server raises codes under 400 to 400).
    pub fn with_code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }

    /// The machine-readable reason (a `metav1.StatusReason`, e.g. `Invalid`; default
    /// `Forbidden`).
    pub fn with_reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = reason.into();
        self
    }

    /// Adds a warning returned with the denial.
    pub fn with_warning(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The HTTP status code.
    pub fn code(&self) -> u16 {
        self.code
    }

    /// The reason.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The warnings.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
}

impl<E: StdError> From<E> for Denial {
    fn from(error: E) -> Self {
        Self::new(error.to_string())
    }
}

/// An allowed response with `warnings` (uid filled in later).
pub(crate) fn allowed(warnings: Warnings) -> AdmissionResponse {
    let mut response = blank();
    response.allowed = true;
    response.result.status = None;
    response.result.reason = String::new();
    response.result.message = String::new();
    response.result.code = 200;
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
    }
    response
}

/// The response of `denial`.
pub(crate) fn denied(denial: Denial) -> AdmissionResponse {
    let mut response = blank();
    response.result.code = denial.code;
    response.result.reason = denial.reason;
    response.result.message = denial.message;
    if !denial.warnings.is_empty() {
        response.warnings = Some(denial.warnings);
    }
    response
}

/// A refusal because the review could not be handled (controller-runtime's `Errored`): a bad
/// request, a handler that panicked or timed out.
pub(crate) fn errored(code: u16, message: impl Into<String>) -> AdmissionResponse {
    let mut response = blank();
    response.result.code = code;
    response.result.reason = String::new();
    response.result.message = message.into();
    response
}

/// A refused response with a `Failure` status and nothing else.
fn blank() -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid("");
    response.result.status = Some(StatusSummary::Failure);
    response
}
