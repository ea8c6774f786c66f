//! [`Convertible`]: a spoke version's conversion to and from its hub, and the
//! [`ConversionError`] either direction may fail with.

use std::error::Error as StdError;
use std::fmt;

/// A version of a kind that converts to and from the hub version `Hub` (controller-runtime's
/// `conversion.Convertible`). Implement it for every version but the hub.
///
/// Metadata need not be carried over: the converted object always keeps the original's
/// metadata (the API server refuses any other change); labels and annotations a conversion
/// sets are added to the original's (or replace them, key by key).
pub trait Convertible<Hub>: Sized {
    /// This object in the hub version.
    fn convert_to_hub(&self) -> Result<Hub, ConversionError>;

    /// The hub object in this version.
    fn convert_from_hub(hub: &Hub) -> Result<Self, ConversionError>;
}

/// Why an object could not be converted: fails the whole `ConversionReview` with this message.
/// Converted from any `std::error::Error` with `?`, or built with [`ConversionError::new`].
pub struct ConversionError {
    source: Box<dyn StdError + Send + Sync>,
}

impl ConversionError {
    /// An error with `message` (a string or any error).
    pub fn new(message: impl Into<Box<dyn StdError + Send + Sync>>) -> Self {
        Self {
            source: message.into(),
        }
    }

    /// The underlying error.
    pub fn source(&self) -> &(dyn StdError + Send + Sync + 'static) {
        self.source.as_ref()
    }
}

impl<E: StdError + Send + Sync + 'static> From<E> for ConversionError {
    fn from(error: E) -> Self {
        Self::new(error)
    }
}

impl fmt::Display for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.source, f)
    }
}

impl fmt::Debug for ConversionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConversionError")
            .field("source", &self.source)
            .finish()
    }
}
