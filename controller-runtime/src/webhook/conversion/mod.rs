//! CRD conversion webhooks, hub and spoke as controller-runtime does them: one version of a kind
//! is the hub, every other version converts to and from it ([`Convertible`]), and the server
//! answers `ConversionReview`s (`apiextensions.k8s.io/v1`) on `/convert` for every registered
//! kind.
//!
//! - `convertible.rs`: [`Convertible`] and [`ConversionError`].
//! - `registry.rs`: [`Conversion::hub`] → [`KindConversion`] (the versions of one kind) and the
//!   registry of every kind the server converts.
//! - `review.rs`: answering one `ConversionReview`.

mod convertible;
mod registry;
pub(crate) mod review;

pub use convertible::{ConversionError, Convertible};
pub use kube::core::conversion::{ConversionRequest, ConversionResponse, ConversionReview};
pub(crate) use registry::Registry;
pub use registry::{Conversion, KindConversion};
