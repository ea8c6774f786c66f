//! Lean projection types: a struct holding only the fields a controller reads, served where a
//! Kubernetes kind is, so `Api<Projection>` lists and watches that kind and an informer caches
//! the projection instead of the whole object.

/// Implements `kube::Resource` for a projection type as the kind `$kind` (a `k8s_openapi` or
/// `#[derive(CustomResource)]` type): the same kind, group, version, plural and scope, and the
/// projection's own `metadata: ObjectMeta` field as its metadata.
///
/// ```
/// use kube::core::ObjectMeta;
/// use k8s_openapi::api::core::v1::Pod;
///
/// /// The part of a Pod this controller reads; serde skips every other field while decoding.
/// #[derive(Clone, Debug, serde::Deserialize)]
/// struct LeanPod {
///     metadata: ObjectMeta,
/// }
///
/// informer::projection_of!(LeanPod, Pod);
///
/// use kube::Resource;
/// assert_eq!(LeanPod::plural(&()), "pods");
/// ```
#[macro_export]
macro_rules! projection_of {
    ($projection:ty, $kind:ty) => {
        impl $crate::__projection::Resource for $projection {
            type DynamicType = ();
            type Scope = <$kind as $crate::__projection::Resource>::Scope;

            fn kind(_: &()) -> $crate::__projection::Cow<'_, str> {
                <$kind as $crate::__projection::Resource>::kind(&())
            }
            fn group(_: &()) -> $crate::__projection::Cow<'_, str> {
                <$kind as $crate::__projection::Resource>::group(&())
            }
            fn version(_: &()) -> $crate::__projection::Cow<'_, str> {
                <$kind as $crate::__projection::Resource>::version(&())
            }
            fn plural(_: &()) -> $crate::__projection::Cow<'_, str> {
                <$kind as $crate::__projection::Resource>::plural(&())
            }
            fn meta(&self) -> &$crate::__projection::ObjectMeta {
                &self.metadata
            }
            fn meta_mut(&mut self) -> &mut $crate::__projection::ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// What [`projection_of!`] names, reachable from any crate that uses the macro.
#[doc(hidden)]
pub mod support {
    pub use kube::core::{ObjectMeta, Resource};
    pub use std::borrow::Cow;
}
