//! The one transform of a cache: the manager's managed-fields stripping, then the
//! representation's own (a metadata-only cache drops each object's constant `types`), then the
//! kind's [`ByObject::transform`](crate::cache::ByObject::transform) — composed once, set once
//! on each of the cache's informers.

use std::sync::Arc;

use informer::{Object, TransformFn, strip_managed_fields};

/// The composition of the steps that apply, in order; `None` when none does.
pub(crate) fn compose<T: Object>(
    strip: bool,
    lean: Option<TransformFn<T>>,
    user: Option<TransformFn<T>>,
) -> Option<TransformFn<T>> {
    let mut steps: Vec<TransformFn<T>> = Vec::with_capacity(3);
    if strip {
        steps.push(Arc::new(strip_managed_fields::<T>));
    }
    steps.extend(lean);
    steps.extend(user);
    match steps.len() {
        0 => None,
        1 => steps.pop(),
        _ => Some(Arc::new(move |mut obj| {
            for step in &steps {
                obj = step(obj)?;
            }
            Ok(obj)
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;

    fn labelled(
        obj: Arc<ConfigMap>,
    ) -> Result<Arc<ConfigMap>, Box<dyn std::error::Error + Send + Sync>> {
        let mut obj = Arc::unwrap_or_clone(obj);
        // Sees the object after the stripping: records whether managed fields were still there.
        let seen = if obj.metadata.managed_fields.is_some() {
            "with"
        } else {
            "without"
        };
        obj.metadata.labels = Some([("managed-fields".to_owned(), seen.to_owned())].into());
        Ok(Arc::new(obj))
    }

    fn with_managed_fields() -> Arc<ConfigMap> {
        let mut obj = ConfigMap::default();
        obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry::default()]);
        Arc::new(obj)
    }

    #[test]
    fn strips_before_the_user_transform_and_each_step_runs_once() {
        let transform = compose(true, None, Some(Arc::new(labelled))).unwrap();
        let out = transform(with_managed_fields()).unwrap();
        assert!(out.metadata.managed_fields.is_none());
        assert_eq!(
            out.metadata.labels.as_ref().unwrap()["managed-fields"],
            "without"
        );

        let keep = compose(false, None, Some(Arc::new(labelled))).unwrap();
        let out = keep(with_managed_fields()).unwrap();
        assert!(out.metadata.managed_fields.is_some());
        assert_eq!(
            out.metadata.labels.as_ref().unwrap()["managed-fields"],
            "with"
        );
    }

    #[test]
    fn nothing_to_apply_is_no_transform() {
        assert!(compose::<ConfigMap>(false, None, None).is_none());
        let only_strip = compose::<ConfigMap>(true, None, None).unwrap();
        assert!(
            only_strip(with_managed_fields())
                .unwrap()
                .metadata
                .managed_fields
                .is_none()
        );
    }
}
