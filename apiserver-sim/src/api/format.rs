//! [`Format`]: the encoding of a response (JSON or Kubernetes protobuf), negotiated from
//! the `Accept` header as upstream does: the first media range the server can produce
//! wins (client-go's typed clients send `application/vnd.kubernetes.protobuf,
//! application/json`).

use super::protobuf::PROTOBUF;
use super::repr::media_type;

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
    /// The format an `Accept` header selects; `protobuf_ok` when the resource has a protobuf
    /// form. None when nothing acceptable can be produced (406).
    pub fn negotiate(accept: Option<&str>, protobuf_ok: bool) -> Option<Self> {
        let Some(accept) = accept.filter(|a| !a.trim().is_empty()) else {
            return Some(Format::Json);
        };
        for range in accept.split(',') {
            let base = media_type(range);
            let table = range.split(';').any(|p| p.trim() == "as=Table");
            match base.as_str() {
                PROTOBUF if protobuf_ok && !table => return Some(Format::Protobuf),
                "*/*" | "application/*" => return Some(Format::Json),
                b if b.contains("json") => return Some(Format::Json),
                _ => {}
            }
        }
        None
    }

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
    fn first_producible_range_wins() {
        let typed = Some("application/vnd.kubernetes.protobuf,application/json");
        assert_eq!(Format::negotiate(typed, true), Some(Format::Protobuf));
        assert_eq!(Format::negotiate(typed, false), Some(Format::Json));
        assert_eq!(Format::negotiate(None, true), Some(Format::Json));
        assert_eq!(
            Format::negotiate(Some("application/vnd.kubernetes.protobuf"), false),
            None
        );
        assert_eq!(
            Format::negotiate(Some("application/json, */*"), true),
            Some(Format::Json)
        );
        assert!(Format::prefers_protobuf(typed));
    }
}
