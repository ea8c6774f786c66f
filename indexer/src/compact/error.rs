//! What can go wrong when a compact object is decoded.

/// A compact object's body could not be turned back into the typed object.
///
/// Not transient: the same stored object fails the same way every time. It means the body was
/// valid JSON when it arrived but does not match the type `K` (the typed mode's reflector would
/// have skipped the object when it arrived), or that a compressed body was damaged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The compressed body did not decompress.
    #[error("the stored {encoding} body does not decompress: {reason}")]
    Decompress {
        /// The body's encoding.
        encoding: &'static str,
        /// What the decompressor reported.
        reason: String,
    },
    /// The body's JSON does not deserialize into the typed object.
    #[error("the stored object does not deserialize into its type: {0}")]
    Json(#[from] serde_json::Error),
}
