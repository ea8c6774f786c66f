//! [`Format`]: the encoding of a response (JSON or Kubernetes protobuf), and the media types
//! the server encodes. `api/accept.rs` negotiates it from the `Accept` header with the
//! representation (client-go's typed clients send `application/vnd.kubernetes.protobuf,
//! application/json`).

use super::repr::media_type;

/// The protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The media types a real server lists in a 406 answer for a resource with a protobuf form.
pub const SUPPORTED: &str =
    "application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// The media types listed in a 406 answer for a resource without a protobuf form.
pub const SUPPORTED_WITHOUT_PROTOBUF: &str = "application/json, application/yaml";

/// The encoding of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// JSON (one object per line on watches).
    #[default]
    Json,
    /// `application/vnd.kubernetes.protobuf` (length-prefixed frames on watches).
    Protobuf,
}

impl Format {
    /// Whether a request accepts protobuf first (errors then go out in protobuf).
    pub fn prefers_protobuf(accept: Option<&str>) -> bool {
        accept
            .and_then(|a| a.split(',').next())
            .is_some_and(|first| media_type(first) == PROTOBUF)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protobuf_first_is_preferred() {
        assert!(Format::prefers_protobuf(Some(
            "application/vnd.kubernetes.protobuf,application/json"
        )));
        assert!(!Format::prefers_protobuf(Some(
            "application/json,application/vnd.kubernetes.protobuf"
        )));
        assert!(!Format::prefers_protobuf(None));
    }
}
