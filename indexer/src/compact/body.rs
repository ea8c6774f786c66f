//! The stored form of a compact object's JSON, and reading it back.

use std::fmt;
use std::sync::Arc;

use super::DecodeError;
use super::contexts;
use super::dictionary::Dictionary;
use super::options::Encoding;
use super::scan::Span;

/// A compact object's JSON in one of the [`Encoding`]s.
#[derive(Clone)]
pub(crate) enum Body {
    /// The JSON as it arrived (or with `metadata.managedFields` cut out), and where its
    /// `managedFields` member lies while it is still there.
    Json {
        text: Box<str>,
        managed_fields: Option<Span>,
    },
    /// One zstd frame (content size in its header), no dictionary.
    Zstd(Box<[u8]>),
    /// One zstd frame compressed with the kind's trained dictionary.
    ZstdDictionary {
        frame: Box<[u8]>,
        dictionary: Arc<Dictionary>,
    },
    /// The JSON's length (4 bytes, little-endian), then one lz4 block.
    Lz4(Box<[u8]>),
}

impl Body {
    /// The encoding this body is in.
    pub(crate) fn encoding(&self) -> Encoding {
        match self {
            Body::Json { .. } => Encoding::Json,
            Body::Zstd(_) => Encoding::Zstd,
            Body::ZstdDictionary { .. } => Encoding::ZstdDictionary,
            Body::Lz4(_) => Encoding::Lz4,
        }
    }

    /// The bytes this body keeps (the encoded data alone, not the dictionary).
    pub(crate) fn len(&self) -> usize {
        match self {
            Body::Json { text, .. } => text.len(),
            Body::Zstd(bytes) | Body::Lz4(bytes) => bytes.len(),
            Body::ZstdDictionary { frame, .. } => frame.len(),
        }
    }

    /// Calls `read` with the body's JSON, decompressed into a buffer of this thread if needed.
    pub(crate) fn with_json<R>(&self, read: impl FnOnce(&[u8]) -> R) -> Result<R, DecodeError> {
        match self {
            Body::Json { text, .. } => Ok(read(text.as_bytes())),
            Body::Zstd(frame) => contexts::zstd_decompress(frame, None, read),
            Body::ZstdDictionary { frame, dictionary } => {
                contexts::zstd_decompress(frame, Some(dictionary), read)
            }
            Body::Lz4(block) => contexts::lz4_decompress(block, read),
        }
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} body of {} bytes", self.encoding(), self.len())
    }
}
